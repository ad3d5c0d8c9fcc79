// expect: accept
// why: a static subprogram tail-calls (allowed with BTF) below a caller frame of 8 bytes
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

struct {
  __uint(type, BPF_MAP_TYPE_PROG_ARRAY);
  __uint(max_entries, 2);
  __type(key, __u32);
  __type(value, __u32);
} jmp SEC(".maps");

static __attribute__((noinline)) int next_frame(struct bpf_perf_event_data *ctx) {
  bpf_tail_call(ctx, &jmp, 0);
  return 0;
}

SEC("perf_event")
int walk(struct bpf_perf_event_data *ctx) {
  char frame[8];
  bpf_get_current_comm(frame, sizeof(frame));
  return next_frame(ctx) + frame[0];
}

char LICENSE[] SEC("license") = "GPL";
