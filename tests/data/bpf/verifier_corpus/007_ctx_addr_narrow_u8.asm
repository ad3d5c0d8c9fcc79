# license: GPL
# expect: accept
# why: narrow 1-byte load of the last byte of addr (off 183)
ldxb %r0, [%r1+183]
exit
