# license: GPL
# expect: accept
# why: the callee writes the caller's stack through a pointer argument
mov %r1, %r10
add %r1, -8
call local f
ldxdw %r0, [%r10-8]
exit
f:
stdw [%r1+0], 5
mov %r0, 0
exit
