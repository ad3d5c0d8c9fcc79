// An object as tools like bcc's libbpf-tools write them: a perf_event program beside a kprobe and
// a tracepoint program. `userperf bpf verify` verifies the perf_event one and says it skipped the
// others (tests/integration/bpf_verify_test.sh).
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>

#include <bpf/bpf_helpers.h>

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u64);
} hits SEC(".maps");

SEC("kprobe/do_nanosleep")
int on_nanosleep(void* ctx) {
  __u32 key = 0;
  __u64* v = bpf_map_lookup_elem(&hits, &key);
  if (v) __sync_fetch_and_add(v, 1);
  return 0;
}

SEC("tracepoint/sched/sched_switch")
int on_sched_switch(void* ctx) {
  return 0;
}

SEC("perf_event")
int on_sample(struct bpf_perf_event_data* ctx) {
  __u32 key = 0;
  __u64* v = bpf_map_lookup_elem(&hits, &key);
  if (v) __sync_fetch_and_add(v, ctx->sample_period);
  return 1;
}

char LICENSE[] SEC("license") = "GPL";
