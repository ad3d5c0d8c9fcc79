# license: MIT
# expect: accept
# why: bpf_get_current_ancestor_cgroup_id takes any scalar level
mov %r1, 2
call bpf_get_current_ancestor_cgroup_id
rsh %r0, 32
exit
