# license: GPL
# expect: reject EACCES
# why: a fetching atomic through a variable-offset stack pointer: refused at the first read as a plain one is, before the fill of r5 (found by verifier_soundness)
ldxdw %r8, [%r1+32]
stdw [%r10-64], 0
stdw [%r10-56], 0
stdw [%r10-48], 0
stdw [%r10-40], 0
mov %r3, %r10
add %r3, -64
and %r8, 24
add %r3, %r8
mov %r5, 1
lock fetch xor [%r3], %r5
mov %r0, %r5
exit
