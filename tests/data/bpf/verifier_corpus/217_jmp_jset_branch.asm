# license: GPL
# expect: accept
# why: jset on a ctx value
ldxdw %r2, [%r1+168]
mov %r0, 0
jset %r2, 1, out
mov %r0, 1
out:
exit
