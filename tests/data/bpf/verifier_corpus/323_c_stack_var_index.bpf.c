// expect: accept
// why: a stack array indexed by a masked ctx value (variable-offset stack access)
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

SEC("perf_event")
int stack_var_index(struct bpf_perf_event_data *ctx) {
  volatile __u8 bytes[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  return bytes[ctx->sample_period & 15];
}

char LICENSE[] SEC("license") = "GPL";
