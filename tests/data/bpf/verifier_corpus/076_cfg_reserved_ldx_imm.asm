# license: GPL
# expect: reject EINVAL
# why: ldxdw with a non-zero imm
raw 0x0000000100a81079
raw 0x0000000000000095
