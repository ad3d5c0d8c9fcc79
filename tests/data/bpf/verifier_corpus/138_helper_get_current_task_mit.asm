# license: MIT
# expect: reject EINVAL
# why: get_current_task is GPL-only
call bpf_get_current_task
exit
