# license: GPL
# map: counts hash key=4 value=8 entries=16
# expect: accept
# why: loading through the map pointer itself
lddw %r1, map:counts
ldxdw %r0, [%r1+0]
exit
