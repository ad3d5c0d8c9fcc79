# license: GPL
# expect: accept
# why: bpf_get_current_pid_tgid
call bpf_get_current_pid_tgid
exit
