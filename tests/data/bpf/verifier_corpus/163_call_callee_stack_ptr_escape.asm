# license: GPL
# expect: reject EINVAL
# why: the callee returns a pointer to its own stack (privileged)
call local f
mov %r0, 0
exit
f:
mov %r0, %r10
add %r0, -8
exit
