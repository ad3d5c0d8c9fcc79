# license: GPL
# expect: reject EACCES
# why: 4-byte load of sample_period at a 2-aligned offset
ldxw %r0, [%r1+170]
exit
