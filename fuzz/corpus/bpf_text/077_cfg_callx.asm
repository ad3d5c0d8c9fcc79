# license: GPL
# expect: reject EINVAL
# why: callx (indirect call, 0x8d) is not accepted by the kernel
raw 0x00000000000000b7
raw 0x000000000000008d
raw 0x0000000000000095
