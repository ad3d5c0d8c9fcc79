# license: GPL
# expect: reject EINVAL
# why: the second half of lddw must have opcode 0
raw 0x0000000100000018
raw 0x0000000000000095
raw 0x0000000000000095
