# license: MIT
# expect: reject EINVAL
# why: read_branch_records is GPL-only
mov %r2, %r10
add %r2, -48
mov %r3, 48
mov %r4, 0
call bpf_read_branch_records
exit
