// expect: reject EINVAL
// why: bpf_perf_event_output of a stack record from an MIT program: the helper is GPL-only
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

struct {
  __uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
  __uint(key_size, sizeof(__u32));
  __uint(value_size, sizeof(__u32));
} events SEC(".maps");

struct record {
  __u64 period;
  __u64 addr;
};

SEC("perf_event")
int output_mit(struct bpf_perf_event_data *ctx) {
  struct record record = {.period = ctx->sample_period, .addr = ctx->addr};
  bpf_perf_event_output(ctx, &events, BPF_F_CURRENT_CPU, &record, sizeof(record));
  return 0;
}

char LICENSE[] SEC("license") = "MIT";
