# license: GPL
# expect: accept
# why: signed division and modulo by immediates
ldxdw %r0, [%r1+168]
sdiv %r0, -3
smod32 %r0, 7
exit
