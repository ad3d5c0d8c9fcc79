# license: GPL
# expect: accept
# why: ctx pointer spilled to the stack and filled back keeps its type
stxdw [%r10-8], %r1
mov %r1, 0
ldxdw %r2, [%r10-8]
ldxdw %r0, [%r2+168]
exit
