# license: GPL
# expect: reject EINVAL
# why: a JSET's false branch forgets the ranges before narrowing the tnum: s32 [-63,0] and low byte (0; 0xf8) would give 0, the kernel keeps only [0,248] (found by verifier_soundness)
ldxdw %r8, [%r1+0]
and %r8, 63
neg32 %r8
jset32 %r8, -249, +4
mov %r7, %r10
add %r7, -8
add %r7, %r8
stdw [%r7], 0
mov %r0, 0
exit
