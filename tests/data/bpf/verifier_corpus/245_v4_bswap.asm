# license: GPL
# expect: accept
# why: unconditional byte swaps
ldxdw %r0, [%r1+168]
bswap16 %r0
bswap32 %r0
bswap64 %r0
exit
