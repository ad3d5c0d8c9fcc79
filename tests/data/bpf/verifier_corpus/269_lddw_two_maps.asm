# license: GPL
# map: counts hash key=4 value=8 entries=16
# map: cfg array key=4 value=16 entries=1
# expect: accept
# why: two maps referenced: a hash lookup and a direct array value
stw [%r10-4], 0
mov %r2, %r10
add %r2, -4
lddw %r1, map:counts
call bpf_map_lookup_elem
jeq %r0, 0, out
ldxdw %r6, [%r0+0]
lddw %r1, map_value:cfg+8
stxdw [%r1+0], %r6
out:
mov %r0, 0
exit
