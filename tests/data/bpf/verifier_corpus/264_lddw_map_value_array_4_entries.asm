# license: GPL
# map: four array key=4 value=8 entries=4
# expect: reject ENOTSUPP
# why: direct value access needs an array of one entry
lddw %r1, map_value:four+0
ldxdw %r0, [%r1+0]
exit
