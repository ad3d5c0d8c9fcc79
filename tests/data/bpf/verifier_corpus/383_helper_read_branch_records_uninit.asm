# license: GPL
# expect: accept
# why: the buffer is written by the helper: an uninitialised stack buffer, then read back
mov %r2, %r10
add %r2, -48
mov %r3, 48
mov %r4, 0
call bpf_read_branch_records
ldxdw %r0, [%r10-48]
exit
