# license: GPL
# map: outer array_of_maps key=4 value=4 entries=4 inner=hash:8:8:16
# expect: reject EINVAL
# why: the inner map's key is the template's (8 bytes): a key at fp-4 would be read past the top of the frame
stw [%r10-4], 0
mov %r2, %r10
add %r2, -4
lddw %r1, map:outer
call bpf_map_lookup_elem
jeq %r0, 0, +5
mov %r1, %r0
mov %r2, %r10
add %r2, -4
call bpf_map_lookup_elem
mov %r0, 0
exit
