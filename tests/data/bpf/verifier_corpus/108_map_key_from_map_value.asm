# license: GPL
# map: counts hash key=4 value=8 entries=16
# expect: accept
# why: a map value used as the key of another lookup
stw [%r10-4], 0
mov %r2, %r10
add %r2, -4
lddw %r1, map:counts
call bpf_map_lookup_elem
jeq %r0, 0, out
mov %r2, %r0
lddw %r1, map:counts
call bpf_map_lookup_elem
mov %r0, 0
out:
exit
