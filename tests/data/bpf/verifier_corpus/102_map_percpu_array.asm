# license: GPL
# map: pcpu percpu_array key=4 value=8 entries=2
# expect: accept
# why: per-CPU array lookup and 8-byte store into the value
stw [%r10-4], 0
mov %r2, %r10
add %r2, -4
lddw %r1, map:pcpu
call bpf_map_lookup_elem
jeq %r0, 0, out
stdw [%r0+0], 1
mov %r0, 0
out:
exit
