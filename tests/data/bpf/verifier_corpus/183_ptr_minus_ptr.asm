# license: GPL
# expect: accept
# why: stack pointer minus stack pointer is a scalar (privileged)
mov %r1, %r10
mov %r2, %r10
add %r2, -8
sub %r1, %r2
mov %r0, %r1
exit
