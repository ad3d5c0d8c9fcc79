# license: GPL
# expect: reject EACCES
# why: sign-extending byte load inside pt_regs (narrow: not allowed)
ldxsb %r0, [%r1+8]
exit
