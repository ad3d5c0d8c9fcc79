# license: GPL
# map: cgroups cgroup_array key=4 value=4 entries=4
# expect: accept
# why: bpf_current_task_under_cgroup takes a CGROUP_ARRAY and any index
lddw %r1, map:cgroups
mov %r2, 0
call bpf_current_task_under_cgroup
exit
