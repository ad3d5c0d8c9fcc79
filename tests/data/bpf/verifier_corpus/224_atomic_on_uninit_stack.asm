# license: GPL
# expect: accept
# why: atomic add on a stack slot never written
mov %r1, 1
lock add [%r10-8], %r1
mov %r0, 0
exit
