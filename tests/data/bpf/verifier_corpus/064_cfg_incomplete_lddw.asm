# license: GPL
# expect: reject EINVAL
# why: lddw as the last instruction, without its second half
raw 0x00000000000000b7
raw 0x0000000000000095
raw 0x0000000100000018
