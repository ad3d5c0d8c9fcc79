# license: GPL
# expect: accept
# why: probe_read_user_str into a 32-byte stack buffer
ldxdw %r3, [%r1+176]
mov %r1, %r10
add %r1, -32
mov %r2, 32
call bpf_probe_read_user_str
exit
