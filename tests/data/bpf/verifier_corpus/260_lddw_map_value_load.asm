# license: GPL
# map: cfg array key=4 value=16 entries=1
# expect: accept
# why: direct map value address (array, one entry) plus 8, then a load
lddw %r1, map_value:cfg+8
ldxdw %r0, [%r1+0]
exit
