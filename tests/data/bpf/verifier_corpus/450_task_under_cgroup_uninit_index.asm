# license: GPL
# map: cgroups cgroup_array key=4 value=4 entries=4
# expect: reject EACCES
# why: the index argument must be initialised (ARG_ANYTHING still reads the register)
lddw %r1, map:cgroups
call bpf_current_task_under_cgroup
exit
