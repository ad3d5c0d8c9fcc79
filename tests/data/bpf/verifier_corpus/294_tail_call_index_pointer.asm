# license: GPL
# map: progs prog_array key=4 value=4 entries=4
# expect: accept
# why: the index is an ARG_ANYTHING: a pointer is accepted for root (allow_ptr_leaks)
mov %r3, %r10
lddw %r2, map:progs
call bpf_tail_call
mov %r0, 0
exit
