// expect: reject EACCES
// why: a global function's ctx argument given the ctx plus 8: refused at the call as a modified ctx pointer
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

__attribute__((noinline)) int period_of(struct bpf_perf_event_data *c) {
  return c->sample_period > 3;
}

SEC("perf_event")
int global_modified_ctx(struct bpf_perf_event_data *ctx) {
  return period_of((struct bpf_perf_event_data *)((char *)ctx + 8));
}

char LICENSE[] SEC("license") = "GPL";
