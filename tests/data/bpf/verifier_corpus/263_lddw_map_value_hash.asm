# license: GPL
# map: counts hash key=4 value=8 entries=16
# expect: reject EINVAL
# why: direct value access is for arrays only, not a hash
lddw %r1, map_value:counts+0
mov %r0, 0
exit
