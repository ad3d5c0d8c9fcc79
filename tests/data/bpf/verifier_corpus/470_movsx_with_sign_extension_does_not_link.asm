# license: GPL
# expect: reject EINVAL
# why: r8 = (s8)r3 with r3 in [0, 255] may sign-extend: not linked, so the bound found on r8 leaves r3 in [0, 255], past the 64 bytes above fp-64
ldxdw %r3, [%r1+0]
and %r3, 255
movsx864 %r8, %r3
jgt %r8, 63, +6
mov %r7, %r10
add %r7, -64
add %r7, %r3
stb [%r7], 0
mov %r0, 0
exit
mov %r0, 0
exit
