# license: MIT
# expect: accept
# why: bpf_get_current_cgroup_id: no arguments, not GPL-only, a scalar
call bpf_get_current_cgroup_id
rsh %r0, 32
exit
