# license: GPL
# expect: accept
# why: read_branch_records with a NULL buffer and size 0 (the size query form)
mov %r2, 0
mov %r3, 0
mov %r4, 1
call bpf_read_branch_records
exit
