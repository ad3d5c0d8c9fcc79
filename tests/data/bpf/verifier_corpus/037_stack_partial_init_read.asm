# license: GPL
# expect: accept
# why: an 8-byte load of a slot whose low 4 bytes were written
stw [%r10-8], 0
ldxdw %r0, [%r10-8]
exit
