# license: GPL
# expect: accept
# why: negating a pointer
mov %r2, %r10
neg %r2
mov %r0, 0
exit
