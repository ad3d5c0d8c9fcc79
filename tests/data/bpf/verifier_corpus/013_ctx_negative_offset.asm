# license: GPL
# expect: reject EACCES
# why: ctx load at a negative offset
ldxdw %r0, [%r1-8]
exit
