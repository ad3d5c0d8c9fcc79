# license: GPL
# map: cgroups cgroup_array key=4 value=4 entries=4
# expect: reject EACCES
# why: arg1 must be a map from lddw, not a stack pointer
mov %r1, %r10
add %r1, -8
mov %r2, 0
call bpf_current_task_under_cgroup
exit
