# license: GPL
# expect: reject EINVAL
# why: a loop whose exit depends on a value reloaded each iteration
mov %r6, %r1
loop:
ldxdw %r2, [%r6+168]
jne %r2, 0, loop
mov %r0, 0
exit
