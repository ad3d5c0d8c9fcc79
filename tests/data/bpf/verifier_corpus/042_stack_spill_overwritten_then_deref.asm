# license: GPL
# expect: reject EACCES
# why: a spilled pointer partly overwritten fills back as a scalar
stxdw [%r10-8], %r1
stb [%r10-8], 0
ldxdw %r2, [%r10-8]
ldxdw %r0, [%r2+168]
exit
