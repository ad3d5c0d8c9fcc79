# license: GPL
# expect: accept
# why: narrow 4-byte load of the low half of sample_period
ldxw %r0, [%r1+168]
exit
