# license: GPL
# map: outer array_of_maps key=4 value=4 entries=4 inner=array:4:16:8
# expect: reject EINVAL
# why: a program may only look up an outer map: bpf_map_update_elem on an ARRAY_OF_MAPS is refused
stw [%r10-4], 0
stw [%r10-8], 0
mov %r2, %r10
add %r2, -4
mov %r3, %r10
add %r3, -8
mov %r4, 0
lddw %r1, map:outer
call bpf_map_update_elem
mov %r0, 0
exit
