# license: GPL
# map: counts hash key=4 value=4 entries=4
# expect: reject EINVAL
# why: bpf_current_task_under_cgroup takes a CGROUP_ARRAY only
lddw %r1, map:counts
mov %r2, 0
call bpf_current_task_under_cgroup
exit
