# license: GPL
# map: wide hash key=8 value=8 entries=16
# expect: reject EINVAL
# why: an 8-byte key at r10-4 runs past the top of the stack
stw [%r10-4], 0
mov %r2, %r10
add %r2, -4
lddw %r1, map:wide
call bpf_map_lookup_elem
mov %r0, 0
exit
