# license: GPL
# map: small array key=4 value=8 entries=4
# expect: reject EACCES
# why: array map lookup with a constant in-range index, no NULL check (6.14+ elides it)
stw [%r10-4], 2
mov %r2, %r10
add %r2, -4
lddw %r1, map:small
call bpf_map_lookup_elem
ldxdw %r0, [%r0+0]
exit
