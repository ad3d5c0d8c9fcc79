# license: GPL
# expect: accept
# why: store then load an 8-byte stack slot
stdw [%r10-8], 1
ldxdw %r0, [%r10-8]
exit
