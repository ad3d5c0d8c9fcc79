# license: GPL
# expect: accept
# why: sign-extending byte load (MEMSX) of sample_period
ldxsb %r0, [%r1+168]
exit
