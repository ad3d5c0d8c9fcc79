// expect: reject EACCES
// why: the perf_event ctx is read-only
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

SEC("perf_event")
int ctx_write(struct bpf_perf_event_data *ctx) {
  *(volatile __u64 *)&ctx->sample_period = 0;
  return 1;
}

char LICENSE[] SEC("license") = "GPL";
