// One BPF_MAP_TYPE_RINGBUF record per sample: reserved, filled from the context and helpers,
// then submitted, except every fifth run's, which is discarded. `stats` counts runs, failed
// reservations and discards, so a consumer can check what it received.
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>

#include <bpf/bpf_helpers.h>

struct sample_record {
  __u32 pid;
  __u32 tid;
  __u64 period;
  __u64 seq;
  __u64 ring_size;
};

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 64 * 1024);
} events SEC(".maps");

enum { kRuns, kReserveFailed, kDiscarded, kStats };

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __type(key, __u32);
  __type(value, __u64);
  __uint(max_entries, kStats);
} stats SEC(".maps");

static void count(__u32 which) {
  __u64* value = bpf_map_lookup_elem(&stats, &which);
  if (value) __sync_fetch_and_add(value, 1);
}

SEC("perf_event")
int on_sample(struct bpf_perf_event_data* ctx) {
  __u32 key = kRuns;
  __u64* runs = bpf_map_lookup_elem(&stats, &key);
  if (!runs) return 1;
  __u64 seq = __sync_fetch_and_add(runs, 1);
  struct sample_record* rec = bpf_ringbuf_reserve(&events, sizeof(*rec), 0);
  if (!rec) {
    count(kReserveFailed);
    return 1;
  }
  __u64 id = bpf_get_current_pid_tgid();
  rec->pid = id >> 32;
  rec->tid = (__u32)id;
  rec->period = ctx->sample_period;
  rec->seq = seq;
  rec->ring_size = bpf_ringbuf_query(&events, BPF_RB_RING_SIZE);
  if (seq % 5 == 4) {
    count(kDiscarded);
    bpf_ringbuf_discard(rec, 0);
    return 1;
  }
  bpf_ringbuf_submit(rec, 0);
  return 1;
}

char LICENSE[] SEC("license") = "GPL";
