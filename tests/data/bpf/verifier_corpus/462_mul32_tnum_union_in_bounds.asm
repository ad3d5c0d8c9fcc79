# license: GPL
# expect: accept
# why: the kernel's tnum multiplication: (0x2d400; 0x1ff) * 111128 knows no high bit of the low word: after the JSET the low byte (0; 0xf8) bounds a stack offset from fp-256
ldxdw %r8, [%r1+0]
and %r8, 511
or %r8, 185344
mul32 %r8, 111128
jset32 %r8, -249, +4
mov %r7, %r10
add %r7, -256
add %r7, %r8
stdw [%r7], 0
mov %r0, 0
exit
