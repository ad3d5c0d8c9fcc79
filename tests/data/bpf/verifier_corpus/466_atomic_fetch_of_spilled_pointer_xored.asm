# license: GPL
# expect: reject EACCES
# why: a fetching atomic on a slot holding a spilled stack pointer returns that pointer (the kernel's fill keeps its type), so xoring it into a scalar is pointer arithmetic (found by verifier_soundness)
stdw [%r10-8], 0
stdw [%r10-64], 0
mov %r7, %r10
add %r7, -64
stxdw [%r10-56], %r7
mov %r5, 0
lock fetch xor [%r10-56], %r5
ldxdw %r1, [%r10-8]
xor %r1, %r5
mov %r0, 0
exit
