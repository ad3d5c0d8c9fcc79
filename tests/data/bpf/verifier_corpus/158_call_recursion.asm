# license: GPL
# expect: reject E2BIG
# why: a function that calls itself
call local f
exit
f:
call local f
mov %r0, 0
exit
