# license: GPL
# expect: accept
# why: stack pointer plus a bounded variable, then an 8-byte store
ldxdw %r2, [%r1+168]
and %r2, 8
mov %r3, %r10
add %r3, -16
add %r3, %r2
stdw [%r3+0], 0
mov %r0, 0
exit
