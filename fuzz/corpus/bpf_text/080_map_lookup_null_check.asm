# license: GPL
# map: counts hash key=4 value=8 entries=16
# expect: accept
# why: map lookup result NULL-checked before the load
stw [%r10-4], 0
mov %r2, %r10
add %r2, -4
lddw %r1, map:counts
call bpf_map_lookup_elem
jeq %r0, 0, out
ldxdw %r0, [%r0+0]
out:
exit
