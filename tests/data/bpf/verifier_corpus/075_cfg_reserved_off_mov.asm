# license: GPL
# expect: reject EINVAL
# why: mov r0, 1 with off=1 (reserved; movsx uses 8, 16, 32)
raw 0x00000001000100b7
raw 0x0000000000000095
