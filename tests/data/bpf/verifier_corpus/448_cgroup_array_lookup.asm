# license: GPL
# map: cgroups cgroup_array key=4 value=4 entries=4
# expect: reject EINVAL
# why: a CGROUP_ARRAY goes to bpf_current_task_under_cgroup (and skb_under_cgroup) only, not to map_lookup_elem
stw [%r10-4], 0
mov %r2, %r10
add %r2, -4
lddw %r1, map:cgroups
call bpf_map_lookup_elem
mov %r0, 0
exit
