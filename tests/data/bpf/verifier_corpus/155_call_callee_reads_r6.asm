# license: GPL
# expect: reject EACCES
# why: the callee reads r6, which it did not receive
mov %r6, 1
call local f
exit
f:
mov %r0, %r6
exit
