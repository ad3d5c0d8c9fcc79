// expect: reject EINVAL
// why: a global function expecting a pointer to u64 is called with a scalar
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
int global_wrong_arg(struct bpf_perf_event_data *ctx) {
  return twice((__u64 *)(long)(ctx->sample_period | 1));
}

char LICENSE[] SEC("license") = "GPL";
