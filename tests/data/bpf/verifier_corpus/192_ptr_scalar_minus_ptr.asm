# license: GPL
# expect: reject EACCES
# why: scalar -= pointer
mov %r2, 0
sub %r2, %r10
mov %r0, 0
exit
