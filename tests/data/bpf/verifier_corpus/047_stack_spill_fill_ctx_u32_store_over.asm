# license: GPL
# expect: reject EACCES
# why: a 4-byte store over half of a spilled ctx pointer, then an 8-byte fill used as ctx
stxdw [%r10-8], %r1
stw [%r10-4], 0
ldxdw %r1, [%r10-8]
ldxdw %r0, [%r1+168]
exit
