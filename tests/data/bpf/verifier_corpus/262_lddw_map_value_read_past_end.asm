# license: GPL
# map: cfg array key=4 value=16 entries=1
# expect: reject EACCES
# why: direct map value at +8, load at +8 from there
lddw %r1, map_value:cfg+8
ldxdw %r0, [%r1+8]
exit
