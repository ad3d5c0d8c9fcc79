# license: GPL
# map: outer array_of_maps key=4 value=4 entries=4 inner=array:4:8:8
# expect: accept
# why: without BPF_F_INNER_MAP every inner array has the template's max_entries: a constant key in range needs no NULL check
stw [%r10-4], 0
mov %r2, %r10
add %r2, -4
lddw %r1, map:outer
call bpf_map_lookup_elem
jeq %r0, 0, +6
mov %r1, %r0
stw [%r10-8], 3
mov %r2, %r10
add %r2, -8
call bpf_map_lookup_elem
ldxdw %r0, [%r0+0]
mov %r0, 0
exit
