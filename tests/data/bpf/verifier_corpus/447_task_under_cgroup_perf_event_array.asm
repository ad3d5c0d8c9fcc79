# license: GPL
# map: events perf_event_array key=4 value=4 entries=8
# expect: reject EINVAL
# why: another fd array is no CGROUP_ARRAY either
lddw %r1, map:events
mov %r2, 0
call bpf_current_task_under_cgroup
exit
