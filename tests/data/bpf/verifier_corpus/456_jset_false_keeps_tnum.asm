# license: GPL
# expect: accept
# why: what a JSET's false branch keeps is the tnum: the low byte (0; 0xf8) bounds a stack offset from fp-256
ldxdw %r8, [%r1+0]
and %r8, 63
neg32 %r8
jset32 %r8, -249, +4
mov %r7, %r10
add %r7, -256
add %r7, %r8
stdw [%r7], 0
mov %r0, 0
exit
