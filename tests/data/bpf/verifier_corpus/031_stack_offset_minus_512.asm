# license: GPL
# expect: accept
# why: the lowest stack slot, r10-512, is in bounds
stdw [%r10-512], 7
ldxdw %r0, [%r10-512]
exit
