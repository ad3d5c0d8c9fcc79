# license: GPL
# expect: accept
# why: the same variable-offset stack pointer read by a plain load into a register is accepted (the atomics' rule is for reads into no register)
ldxdw %r8, [%r1+32]
stdw [%r10-64], 0
stdw [%r10-56], 0
stdw [%r10-48], 0
stdw [%r10-40], 0
mov %r3, %r10
add %r3, -64
and %r8, 24
add %r3, %r8
ldxdw %r0, [%r3]
exit
