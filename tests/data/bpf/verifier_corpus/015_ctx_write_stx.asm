# license: GPL
# expect: reject EACCES
# why: ctx is read-only: STX to sample_period
mov %r2, 0
stxdw [%r1+168], %r2
mov %r0, 0
exit
