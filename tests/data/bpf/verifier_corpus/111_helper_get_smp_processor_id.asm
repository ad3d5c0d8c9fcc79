# license: GPL
# expect: accept
# why: bpf_get_smp_processor_id
call bpf_get_smp_processor_id
exit
