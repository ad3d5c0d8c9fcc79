# license: GPL
# expect: reject EACCES
# why: xor a scalar with a pointer
mov %r2, 1
xor %r2, %r10
mov %r0, 0
exit
