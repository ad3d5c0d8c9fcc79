# license: GPL
# expect: accept
# why: narrow 4-byte load of the high half of sample_period
ldxw %r0, [%r1+172]
exit
