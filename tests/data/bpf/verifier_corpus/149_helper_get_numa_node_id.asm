# license: GPL
# expect: accept
# why: bpf_get_numa_node_id
call bpf_get_numa_node_id
exit
