// A self-tail-calling walker as profilers' unwinders are (parca-agent, lightswitch): each run
// counts a step in a per-sample state and tail-calls itself through a PROG_ARRAY until the state
// says it is done or the kernel's 33-call limit stops it; `dispatch` picks the walker by index.
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

struct {
  __uint(type, BPF_MAP_TYPE_PROG_ARRAY);
  __uint(max_entries, 4);
  __type(key, __u32);
  __type(value, __u32);
} jmp SEC(".maps");

// [0]: steps walked in this sample, [1]: steps wanted (set from user space), [2]: samples whose
// walk ran past every tail call (the fall-through path), [3]: samples walked to the end.
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 4);
  __type(key, __u32);
  __type(value, __u64);
} state SEC(".maps");

static __u64* slot(__u32 key) {
  return bpf_map_lookup_elem(&state, &key);
}

SEC("perf_event")
int walk(struct bpf_perf_event_data* ctx) {
  __u64* steps = slot(0);
  __u64* wanted = slot(1);
  if (!steps || !wanted) return 0;
  *steps += 1;
  if (*steps >= *wanted) {
    __u64* done = slot(3);
    if (done) *done += 1;
    return 1;
  }
  bpf_tail_call(ctx, &jmp, 1);
  __u64* fell = slot(2);  // the 34th call (or an empty slot) continues here
  if (fell) *fell += 1;
  return 1;
}

SEC("perf_event")
int dispatch(struct bpf_perf_event_data* ctx) {
  __u64* steps = slot(0);
  if (!steps) return 0;
  *steps = 0;
  bpf_tail_call(ctx, &jmp, 1);
  return 0;  // slot 1 empty: the sample is dropped
}

char LICENSE[] SEC("license") = "GPL";
