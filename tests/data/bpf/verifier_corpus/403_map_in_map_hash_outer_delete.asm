# license: GPL
# map: outer hash_of_maps key=8 value=4 entries=16 inner=hash:4:8:16
# expect: reject EINVAL
# why: a program may only look up an outer map: bpf_map_delete_elem on a HASH_OF_MAPS is refused
stdw [%r10-8], 0
mov %r2, %r10
add %r2, -8
lddw %r1, map:outer
call bpf_map_delete_elem
mov %r0, 0
exit
