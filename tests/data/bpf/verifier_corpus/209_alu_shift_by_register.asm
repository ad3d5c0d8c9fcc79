# license: GPL
# expect: accept
# why: shift by a register value
ldxdw %r2, [%r1+168]
mov %r0, 1
lsh %r0, %r2
exit
