# license: GPL
# expect: accept
# why: gotol: 32-bit jump offset
ldxdw %r2, [%r1+168]
mov %r0, 0
jeq %r2, 0, skip
ja32 out
skip:
mov %r0, 1
out:
exit
