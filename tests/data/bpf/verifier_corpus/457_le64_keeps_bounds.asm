# license: GPL
# expect: accept
# why: le64 on a little-endian host changes nothing, bounds included (scalar_byte_swap): [0, 248] still bounds a stack offset (found by verifier_soundness)
ldxdw %r8, [%r1+0]
and %r8, 248
le64 %r8
mov %r7, %r10
add %r7, -256
add %r7, %r8
stdw [%r7], 0
mov %r0, 0
exit
