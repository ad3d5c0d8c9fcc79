# license: GPL
# map: cfg array key=4 value=16 entries=1
# expect: reject EACCES
# why: direct map value pointer moved before the value's start
lddw %r1, map_value:cfg+0
ldxdw %r0, [%r1-8]
exit
