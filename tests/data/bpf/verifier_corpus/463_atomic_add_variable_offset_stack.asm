# license: GPL
# expect: reject EACCES
# why: an atomic through a stack pointer with a variable offset, its range initialized: the kernel's first read (check_atomic_rmw, into no register) needs a constant offset (found by verifier_soundness)
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
lock add [%r3], %r5
mov %r0, 0
exit
