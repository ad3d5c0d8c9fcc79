# license: GPL
# expect: accept
# why: 8-byte load of the last pt_regs slot (ss at 160)
ldxdw %r0, [%r1+160]
exit
