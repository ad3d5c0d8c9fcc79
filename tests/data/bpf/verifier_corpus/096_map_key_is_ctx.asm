# license: GPL
# map: counts hash key=4 value=8 entries=16
# expect: reject EACCES
# why: the ctx pointer is not a valid map key argument
mov %r2, %r1
lddw %r1, map:counts
call bpf_map_lookup_elem
mov %r0, 0
exit
