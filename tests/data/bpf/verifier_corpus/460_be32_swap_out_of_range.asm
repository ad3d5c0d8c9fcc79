# license: GPL
# expect: reject EACCES
# why: be32 moves a known low byte to the top: (0; 0xf8) becomes (0; 0xf8000000), too large a stack offset
ldxdw %r8, [%r1+0]
and %r8, 248
be32 %r8
mov %r7, %r10
add %r7, -256
add %r7, %r8
stdw [%r7], 0
mov %r0, 0
exit
