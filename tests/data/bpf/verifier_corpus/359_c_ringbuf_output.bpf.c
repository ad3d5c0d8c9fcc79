// expect: accept
// why: bpf_ringbuf_output of a stack struct, flags BPF_RB_NO_WAKEUP, its result returned
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>

#include <bpf/bpf_helpers.h>

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 8192);
} ring SEC(".maps");

struct sample {
  __u64 period;
  __u64 addr;
};

SEC("perf_event")
int ringbuf_output(struct bpf_perf_event_data* ctx) {
  struct sample s = {ctx->sample_period, ctx->addr};
  return bpf_ringbuf_output(&ring, &s, sizeof(s), BPF_RB_NO_WAKEUP) == 0;
}

char LICENSE[] SEC("license") = "GPL";
