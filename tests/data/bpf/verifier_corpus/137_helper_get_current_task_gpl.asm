# license: GPL
# expect: accept
# why: get_current_task (GPL-only) from a GPL program
call bpf_get_current_task
exit
