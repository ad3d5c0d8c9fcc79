# license: GPL
# expect: reject EACCES
# why: reading a register never written (r2)
mov %r0, %r2
exit
