# license: GPL
# expect: accept
# why: size 0 is allowed for probe_read_kernel (ARG_CONST_SIZE_OR_ZERO)
mov %r3, 0
mov %r1, %r10
add %r1, -8
mov %r2, 0
call bpf_probe_read_kernel
exit
