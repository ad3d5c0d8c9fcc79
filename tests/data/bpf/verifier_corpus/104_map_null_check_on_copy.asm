# license: GPL
# map: counts hash key=4 value=8 entries=16
# expect: accept
# why: the NULL check of a copy marks the original non-NULL too
stw [%r10-4], 0
mov %r2, %r10
add %r2, -4
lddw %r1, map:counts
call bpf_map_lookup_elem
mov %r6, %r0
jeq %r0, 0, out
ldxdw %r0, [%r6+0]
out:
exit
