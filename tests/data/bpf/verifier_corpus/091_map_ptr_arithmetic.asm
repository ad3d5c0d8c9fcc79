# license: GPL
# map: counts hash key=4 value=8 entries=16
# expect: reject EACCES
# why: arithmetic on the map pointer before passing it
stw [%r10-4], 0
mov %r2, %r10
add %r2, -4
lddw %r1, map:counts
add %r1, 8
call bpf_map_lookup_elem
mov %r0, 0
exit
