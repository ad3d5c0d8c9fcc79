// expect: reject EACCES
// why: a global function dereferences its pointer argument without a NULL check (it may be NULL)
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>


__attribute__((noinline)) int twice(__u64 *p) {
  *p *= 2;
  return 1;
}

SEC("perf_event")
int global_mem_unchecked(struct bpf_perf_event_data *ctx) {
  __u64 v = ctx->sample_period;
  twice(&v);
  return v > 100;
}

char LICENSE[] SEC("license") = "GPL";
