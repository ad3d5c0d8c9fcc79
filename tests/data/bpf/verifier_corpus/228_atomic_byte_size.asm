# license: GPL
# expect: reject EINVAL
# why: atomic add of size BPF_B does not exist
stdw [%r10-8], 8
mov %r1, 1
raw 0x00000000fff81ad3
mov %r0, 0
exit
