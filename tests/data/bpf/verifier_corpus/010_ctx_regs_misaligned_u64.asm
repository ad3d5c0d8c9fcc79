# license: GPL
# expect: reject EACCES
# why: 8-byte ctx load at an offset that is not 8-aligned
ldxdw %r0, [%r1+4]
exit
