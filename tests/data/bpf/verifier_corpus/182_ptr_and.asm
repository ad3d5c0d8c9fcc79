# license: GPL
# expect: reject EACCES
# why: bitwise and on a pointer
and %r1, 255
mov %r0, 0
exit
