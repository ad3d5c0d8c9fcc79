# license: GPL
# expect: reject EINVAL
# why: MEMSX with size DW does not exist (0x99)
raw 0x00000000000000b7
raw 0x0000000000a80199
raw 0x0000000000000095
