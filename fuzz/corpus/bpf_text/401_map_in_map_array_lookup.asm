# license: GPL
# map: outer array_of_maps key=4 value=4 entries=4 inner=array:4:16:8
# expect: accept
# why: a NULL-checked lookup in an ARRAY_OF_MAPS is the inner map, whose 16-byte values the program reads
stw [%r10-4], 0
mov %r2, %r10
add %r2, -4
lddw %r1, map:outer
call bpf_map_lookup_elem
jeq %r0, 0, +8
mov %r1, %r0
stw [%r10-8], 3
mov %r2, %r10
add %r2, -8
call bpf_map_lookup_elem
jeq %r0, 0, +1
ldxdw %r0, [%r0+8]
mov %r0, 0
exit
