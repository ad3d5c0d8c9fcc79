# license: GPL
# expect: reject EINVAL
# why: a conditional jump to the second half of a reachable lddw
raw 0x00000000000000b7
raw 0x0000000000010015
raw 0x0000000100000018
raw 0x0000000000000000
raw 0x0000000000000095
