# license: GPL
# expect: accept
# why: sign-extending 4-byte load from the stack
stw [%r10-8], -3
ldxsw %r0, [%r10-8]
exit
