# license: GPL
# expect: reject EACCES
# why: cmpxchg reads r0, which was never written
stdw [%r10-8], 5
mov %r1, 6
lock cmpxchg [%r10-8], %r1
mov %r0, 0
exit
