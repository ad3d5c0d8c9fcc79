# license: GPL
# expect: reject EACCES
# why: ctx is read-only: atomic add to sample_period
mov %r2, 1
lock add [%r1+168], %r2
mov %r0, 0
exit
