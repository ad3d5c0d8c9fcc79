# license: GPL
# expect: accept
# why: bswap64 swaps the tnum's bytes: (0; 0xf8 << 56) becomes (0; 0xf8), which bounds a stack offset
ldxdw %r8, [%r1+0]
and %r8, 248
lsh %r8, 56
bswap64 %r8
mov %r7, %r10
add %r7, -256
add %r7, %r8
stdw [%r7], 0
mov %r0, 0
exit
