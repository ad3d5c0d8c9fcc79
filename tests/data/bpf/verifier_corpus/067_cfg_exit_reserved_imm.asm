# license: GPL
# expect: reject EINVAL
# why: exit with a non-zero imm
raw 0x00000000000000b7
raw 0x0000000100000095
