# license: GPL
# map: counts hash key=4 value=8 entries=16
# expect: reject EACCES
# why: load at offset -8 of a map value
stw [%r10-4], 0
mov %r2, %r10
add %r2, -4
lddw %r1, map:counts
call bpf_map_lookup_elem
jeq %r0, 0, out
ldxdw %r0, [%r0-8]
out:
exit
