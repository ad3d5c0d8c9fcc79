// expect: accept
// why: a global function taking a pointer to a u64 (memory of 8 bytes, maybe NULL) that NULL-checks it
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>


__attribute__((noinline)) int twice(__u64 *p) {
  if (!p)
    return 0;
  *p *= 2;
  return 1;
}

SEC("perf_event")
int global_mem_checked(struct bpf_perf_event_data *ctx) {
  __u64 v = ctx->sample_period;
  twice(&v);
  return v > 100;
}

char LICENSE[] SEC("license") = "GPL";
