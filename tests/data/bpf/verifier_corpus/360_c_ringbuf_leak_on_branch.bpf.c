// expect: reject EINVAL
// why: the record is submitted only when the period is large: the other path leaks it
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>

#include <bpf/bpf_helpers.h>

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 4096);
} ring SEC(".maps");

SEC("perf_event")
int ringbuf_leak(struct bpf_perf_event_data* ctx) {
  __u64* slot = bpf_ringbuf_reserve(&ring, sizeof(__u64), 0);
  if (!slot) return 0;
  *slot = ctx->sample_period;
  if (ctx->sample_period > 1000) bpf_ringbuf_submit(slot, 0);
  return 1;
}

char LICENSE[] SEC("license") = "GPL";
