# license: GPL
# expect: accept
# why: the pointer a fetching atomic returns from a spilled slot is a pointer: a load through it is accepted
stdw [%r10-64], 0
mov %r7, %r10
add %r7, -64
stxdw [%r10-56], %r7
mov %r5, 0
lock fetch add [%r10-56], %r5
ldxdw %r0, [%r5+0]
exit
