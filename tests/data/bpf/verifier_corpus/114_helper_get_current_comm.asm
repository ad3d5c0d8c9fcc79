# license: GPL
# expect: accept
# why: get_current_comm into a 16-byte stack buffer (uninit mem arg)
mov %r1, %r10
add %r1, -16
mov %r2, 16
call bpf_get_current_comm
exit
