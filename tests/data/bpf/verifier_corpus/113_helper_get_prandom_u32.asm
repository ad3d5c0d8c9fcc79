# license: GPL
# expect: accept
# why: bpf_get_prandom_u32
call bpf_get_prandom_u32
exit
