# license: GPL
# expect: reject EACCES
# why: a 4-byte fill of a spilled pointer
stxdw [%r10-8], %r1
ldxw %r0, [%r10-8]
exit
