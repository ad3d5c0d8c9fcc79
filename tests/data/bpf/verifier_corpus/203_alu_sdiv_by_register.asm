# license: GPL
# expect: accept
# why: signed division by a register (v4)
ldxdw %r2, [%r1+168]
mov %r0, -100
sdiv %r0, %r2
exit
