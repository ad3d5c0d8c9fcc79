# license: GPL
# expect: accept
# why: 8-byte loads of pt_regs slots (r15 at 0, ip at 128, sp at 152) are allowed
ldxdw %r2, [%r1+0]
ldxdw %r3, [%r1+128]
ldxdw %r0, [%r1+152]
add %r0, %r2
add %r0, %r3
exit
