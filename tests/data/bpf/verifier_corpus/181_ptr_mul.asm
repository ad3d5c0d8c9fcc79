# license: GPL
# expect: reject EACCES
# why: multiplying a pointer
mov %r2, %r10
mul %r2, 2
mov %r0, 0
exit
