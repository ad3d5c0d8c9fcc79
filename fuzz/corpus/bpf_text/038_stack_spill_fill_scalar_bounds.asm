# license: GPL
# map: vals array key=4 value=64 entries=4
# expect: accept
# why: a spilled constant keeps its value: index 56 into a 64-byte value
stw [%r10-4], 1
mov %r2, %r10
add %r2, -4
lddw %r1, map:vals
call bpf_map_lookup_elem
jeq %r0, 0, out
mov %r1, 56
stxdw [%r10-16], %r1
ldxdw %r2, [%r10-16]
add %r0, %r2
ldxdw %r0, [%r0+0]
out:
exit
