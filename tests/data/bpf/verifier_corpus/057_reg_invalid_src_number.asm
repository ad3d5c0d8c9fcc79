# license: GPL
# expect: reject EINVAL
# why: source register 12 does not exist (mov r0, r12)
raw 0x00000000000000b7
raw 0x000000000000c0bf
raw 0x0000000000000095
