# license: GPL
# expect: reject EINVAL
# why: add r0, 1 (BPF_K) with a non-zero src_reg
raw 0x00000000000000b7
raw 0x0000000100001007
raw 0x0000000000000095
