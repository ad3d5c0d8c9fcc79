# license: GPL
# map: counts hash key=4 value=8 entries=16
# expect: reject EACCES
# why: map lookup result dereferenced without a NULL check
stw [%r10-4], 0
mov %r2, %r10
add %r2, -4
lddw %r1, map:counts
call bpf_map_lookup_elem
ldxdw %r0, [%r0+0]
exit
