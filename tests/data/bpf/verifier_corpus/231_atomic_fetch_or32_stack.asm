# license: GPL
# expect: accept
# why: 32-bit fetch-or on the stack
stw [%r10-4], 3
mov %r1, 4
lock fetch or32 [%r10-4], %r1
mov %r0, %r1
exit
