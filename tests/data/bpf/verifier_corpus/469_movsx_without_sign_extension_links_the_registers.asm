# license: GPL
# expect: accept
# why: r8 = (s16)r3 with r3 in [0, 1000] cannot sign-extend, so the two stay linked: the bound found on r8 bounds r3 too (the kernel's no_sext)
ldxdw %r3, [%r1+0]
and %r3, 1023
jgt %r3, 1000, +8
movsx1664 %r8, %r3
jgt %r8, 63, +6
mov %r7, %r10
add %r7, -64
add %r7, %r3
stb [%r7], 0
mov %r0, 0
exit
mov %r0, 0
exit
