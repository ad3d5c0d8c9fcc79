# license: GPL
# map: counts hash key=4 value=8 entries=16
# expect: reject EACCES
# why: lookup whose key register (r2) was never written
lddw %r1, map:counts
call bpf_map_lookup_elem
mov %r0, 0
exit
