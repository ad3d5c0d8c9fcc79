# license: MIT
# map: cgroups cgroup_array key=4 value=4 entries=4
# expect: accept
# why: bpf_current_task_under_cgroup is not GPL-only; the index may be any scalar (here past the end)
lddw %r1, map:cgroups
mov %r2, 100
call bpf_current_task_under_cgroup
exit
