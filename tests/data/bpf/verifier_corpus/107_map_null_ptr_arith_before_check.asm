# license: GPL
# map: counts hash key=4 value=8 entries=16
# expect: reject EACCES
# why: arithmetic on map_value_or_null before the NULL check
stw [%r10-4], 0
mov %r2, %r10
add %r2, -4
lddw %r1, map:counts
call bpf_map_lookup_elem
add %r0, 8
jeq %r0, 0, out
mov %r0, 0
out:
exit
