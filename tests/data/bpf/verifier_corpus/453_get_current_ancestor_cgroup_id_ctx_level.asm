# license: GPL
# expect: accept
# why: r1 still holds the ctx pointer: ARG_ANYTHING takes it from a privileged loader (no pointer-leak check)
call bpf_get_current_ancestor_cgroup_id
mov %r0, 0
exit
