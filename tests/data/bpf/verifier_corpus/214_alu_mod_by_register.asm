# license: GPL
# expect: accept
# why: unsigned modulo by a register
ldxdw %r2, [%r1+168]
mov %r0, 100
mod %r0, %r2
exit
