# license: GPL
# expect: reject EACCES
# why: a NULL buffer needs a size of 0
mov %r2, 0
mov %r3, 24
mov %r4, 0
call bpf_read_branch_records
exit
