# license: GPL
# expect: reject EACCES
# why: r10 (frame pointer) is read-only
mov %r10, 0
mov %r0, 0
exit
