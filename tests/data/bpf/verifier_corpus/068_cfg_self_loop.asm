# license: GPL
# expect: reject EINVAL
# why: ja -1 (a jump to itself) on a reachable path
mov %r0, 0
ldxdw %r2, [%r1+168]
jeq %r2, 0, out
loop:
ja loop
out:
exit
