# license: GPL
# expect: accept
# why: w8 = (s16)w3 with w3 in [0, 63] keeps [0, 63] (the kernel's coerce_subreg_to_size_sx), so fp-64 + r8 is inside the stack; userperf made w8 any s16 (found by verifier_soundness)
ldxdw %r3, [%r1+0]
and %r3, 63
movsx1632 %r8, %r3
mov %r7, %r10
add %r7, -64
add %r7, %r8
stb [%r7], 0
mov %r0, 0
exit
