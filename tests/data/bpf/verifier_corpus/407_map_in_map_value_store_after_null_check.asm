# license: GPL
# map: outer array_of_maps key=4 value=4 entries=4 inner=array:4:16:8
# expect: reject EACCES
# why: a NULL-checked lookup of an outer map is a map pointer, not a value: storing through it is refused
stw [%r10-4], 0
mov %r2, %r10
add %r2, -4
lddw %r1, map:outer
call bpf_map_lookup_elem
jeq %r0, 0, +1
stdw [%r0+0], 1
mov %r0, 0
exit
