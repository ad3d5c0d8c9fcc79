# license: GPL
# map: outer hash_of_maps key=8 value=4 entries=16 inner=hash:4:8:16
# expect: reject EACCES
# why: an inner map's value is bounded by the template's value_size (8): a read at offset 8 is out of bounds
stdw [%r10-8], 0
mov %r2, %r10
add %r2, -8
lddw %r1, map:outer
call bpf_map_lookup_elem
jeq %r0, 0, +8
mov %r1, %r0
stw [%r10-16], 1
mov %r2, %r10
add %r2, -16
call bpf_map_lookup_elem
jeq %r0, 0, +1
ldxdw %r0, [%r0+8]
mov %r0, 0
exit
