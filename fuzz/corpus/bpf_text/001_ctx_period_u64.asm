# license: GPL
# expect: accept
# why: 8-byte load of sample_period (off 168) is allowed
ldxdw %r0, [%r1+168]
exit
