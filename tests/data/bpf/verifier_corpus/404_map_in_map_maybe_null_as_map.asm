# license: GPL
# map: outer hash_of_maps key=8 value=4 entries=16 inner=hash:4:8:16
# expect: reject EACCES
# why: the lookup's result before its NULL check is map_value_or_null, not a map the map helpers take
stdw [%r10-8], 0
mov %r2, %r10
add %r2, -8
lddw %r1, map:outer
call bpf_map_lookup_elem
mov %r1, %r0
stw [%r10-16], 1
mov %r2, %r10
add %r2, -16
call bpf_map_lookup_elem
mov %r0, 0
exit
