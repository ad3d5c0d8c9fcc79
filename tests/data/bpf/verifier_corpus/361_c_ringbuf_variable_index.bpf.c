// expect: accept
// why: a byte of a 64-byte record written at a masked variable index, the record discarded
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>

#include <bpf/bpf_helpers.h>

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 4096);
} ring SEC(".maps");

SEC("perf_event")
int ringbuf_index(struct bpf_perf_event_data* ctx) {
  __u8* rec = bpf_ringbuf_reserve(&ring, 64, 0);
  if (!rec) return 0;
  rec[ctx->sample_period & 63] = 1;
  bpf_ringbuf_discard(rec, BPF_RB_FORCE_WAKEUP);
  return 1;
}

char LICENSE[] SEC("license") = "GPL";
