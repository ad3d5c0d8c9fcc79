# license: GPL
# expect: accept
# why: xchg storing a pointer into the stack
stdw [%r10-8], 0
lock xchg [%r10-8], %r1
mov %r0, 0
exit
