# license: GPL
# expect: accept
# why: narrow 2-byte load inside addr at a 2-aligned offset
ldxh %r0, [%r1+178]
exit
