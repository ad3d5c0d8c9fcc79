# license: GPL
# expect: reject EINVAL
# why: lddw with src_reg 7, not a known pseudo source
raw 0x0000000100007018
raw 0x0000000000000000
raw 0x0000000000000095
