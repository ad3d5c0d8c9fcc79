# license: GPL
# expect: accept
# why: ctx passed in r1 to a callee that reads it
call local f
exit
f:
ldxdw %r0, [%r1+168]
exit
