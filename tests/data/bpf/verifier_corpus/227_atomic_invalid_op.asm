# license: GPL
# expect: reject EINVAL
# why: BPF_ATOMIC with imm 0x11, not an atomic operation
stdw [%r10-8], 8
mov %r1, 1
raw 0x00000011fff81adb
mov %r0, 0
exit
