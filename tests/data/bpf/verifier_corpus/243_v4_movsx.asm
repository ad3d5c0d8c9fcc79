# license: GPL
# expect: accept
# why: movsx 8/16/32 -> 64 and 8/16 -> 32
ldxdw %r1, [%r1+168]
movsx864 %r0, %r1
movsx1664 %r0, %r0
movsx3264 %r0, %r0
movsx832 %r0, %r0
movsx1632 %r0, %r0
exit
