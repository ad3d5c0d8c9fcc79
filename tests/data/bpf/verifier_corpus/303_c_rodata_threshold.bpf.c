// expect: accept
// why: a const volatile threshold in .rodata (frozen, read-only to the program)
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

const volatile __u64 threshold = 100;

SEC("perf_event")
int rodata_threshold(struct bpf_perf_event_data *ctx) {
  return ctx->sample_period > threshold;
}

char LICENSE[] SEC("license") = "GPL";
