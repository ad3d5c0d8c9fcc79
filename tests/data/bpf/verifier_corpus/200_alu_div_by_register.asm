# license: GPL
# expect: accept
# why: division by a register (x/0 is 0 in BPF)
ldxdw %r2, [%r1+168]
mov %r0, 100
div %r0, %r2
exit
