# license: GPL
# expect: reject EACCES
# why: shifting a pointer
mov %r2, %r10
lsh %r2, 1
mov %r0, 0
exit
