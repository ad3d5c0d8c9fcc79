# license: GPL
# expect: reject EINVAL
# why: the kernel's verifier_unpriv_perf selftest: ctx is not known non-NULL, so `if r1 == 0` forks, and one ldx then sees the ctx on one path and the stack on the other
mov %r6, %r10
add %r6, -8
jeq %r1, 0, l0
mov %r2, %r10
add %r2, -176
stxdw [%r6+0], %r2
l0:
jne %r1, 0, l1
stxdw [%r6+0], %r1
l1:
ldxdw %r1, [%r6+0]
ldxdw %r1, [%r1+168]
mov %r0, 0
exit
