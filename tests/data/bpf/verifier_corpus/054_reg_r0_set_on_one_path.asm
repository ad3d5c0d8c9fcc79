# license: GPL
# expect: reject EACCES
# why: r0 is set on one path only
ldxdw %r2, [%r1+168]
jeq %r2, 0, out
mov %r0, 1
out:
exit
