# license: GPL
# expect: accept
# why: scalar += stack pointer gives a stack pointer
mov %r2, -8
add %r2, %r10
stdw [%r2+0], 1
ldxdw %r0, [%r10-8]
exit
