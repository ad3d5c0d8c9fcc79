# license: GPL
# expect: reject EINVAL
# why: a variable-offset stack read that may reach r10+0
stdw [%r10-16], 1
stdw [%r10-8], 2
ldxdw %r2, [%r1+168]
and %r2, 31
mov %r3, %r10
add %r3, -16
add %r3, %r2
ldxb %r0, [%r3+0]
exit
