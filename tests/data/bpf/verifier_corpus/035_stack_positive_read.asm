# license: GPL
# expect: reject EACCES
# why: a load at r10+8 is above the stack
ldxdw %r0, [%r10+8]
exit
