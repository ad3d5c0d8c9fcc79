# license: GPL
# expect: accept
# why: r1-r5 are the callee's arguments
mov %r1, 3
call local f
exit
f:
mov %r0, %r1
exit
