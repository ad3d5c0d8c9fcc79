# license: GPL
# expect: accept
# why: be16, be32, be64 and le64 conversions
ldxdw %r0, [%r1+168]
be16 %r0
be32 %r0
be64 %r0
le64 %r0
exit
