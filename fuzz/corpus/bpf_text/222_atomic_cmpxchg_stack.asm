# license: GPL
# expect: accept
# why: cmpxchg compares with r0
stdw [%r10-8], 5
mov %r0, 5
mov %r1, 6
lock cmpxchg [%r10-8], %r1
exit
