# license: GPL
# map: small array key=4 value=8 entries=4
# expect: accept
# why: array map lookup with a constant in-range index, NULL-checked
stw [%r10-4], 2
mov %r2, %r10
add %r2, -4
lddw %r1, map:small
call bpf_map_lookup_elem
jeq %r0, 0, out
ldxdw %r0, [%r0+0]
out:
exit
