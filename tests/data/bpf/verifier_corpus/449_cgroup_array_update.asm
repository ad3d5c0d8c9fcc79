# license: GPL
# map: cgroups cgroup_array key=4 value=4 entries=4
# expect: reject EINVAL
# why: programs do not store into a CGROUP_ARRAY
stw [%r10-4], 0
stw [%r10-8], 0
mov %r2, %r10
add %r2, -4
mov %r3, %r10
add %r3, -8
mov %r4, 0
lddw %r1, map:cgroups
call bpf_map_update_elem
mov %r0, 0
exit
