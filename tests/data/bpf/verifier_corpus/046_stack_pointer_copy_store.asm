# license: GPL
# expect: accept
# why: a stack pointer in another register, used with an offset
mov %r2, %r10
add %r2, -64
stdw [%r2+8], 3
ldxdw %r0, [%r2+8]
exit
