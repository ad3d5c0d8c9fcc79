# license: GPL
# expect: reject EACCES
# why: a scalar where the map pointer must be
stw [%r10-4], 0
mov %r2, %r10
add %r2, -4
mov %r1, 0
call bpf_map_lookup_elem
mov %r0, 0
exit
