// expect: accept
// why: a counted loop clang keeps as a loop (not unrolled)
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

SEC("perf_event")
int bounded_loop(struct bpf_perf_event_data *ctx) {
  __u64 period = ctx->sample_period;
  __u64 bits = 0;
#pragma clang loop unroll(disable)
  for (int i = 0; i < 64; i++) {
    if (period & (1ULL << i)) bits++;
  }
  return bits > 4;
}

char LICENSE[] SEC("license") = "GPL";
