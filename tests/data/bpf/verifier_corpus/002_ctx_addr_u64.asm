# license: GPL
# expect: accept
# why: 8-byte load of addr (off 176) is allowed
ldxdw %r0, [%r1+176]
exit
