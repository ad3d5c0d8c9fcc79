// expect: reject EACCES
// why: six frames of 48 bytes (under the 64-byte private-stack threshold, so on the shared stack) below a tail-calling subprogram: 288 bytes of previous frames
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

struct {
  __uint(type, BPF_MAP_TYPE_PROG_ARRAY);
  __uint(max_entries, 2);
  __type(key, __u32);
  __type(value, __u32);
} jmp SEC(".maps");

static __attribute__((noinline)) int tail(struct bpf_perf_event_data *ctx) {
  bpf_tail_call(ctx, &jmp, 0);
  return 0;
}

#define FRAME(name, callee)                                         \
  static __attribute__((noinline)) int name(struct bpf_perf_event_data *ctx) { \
    char frame[48];                                                 \
    bpf_get_current_comm(frame, sizeof(frame));                     \
    return callee(ctx) + frame[0];                                  \
  }
FRAME(f5, tail)
FRAME(f4, f5)
FRAME(f3, f4)
FRAME(f2, f3)
FRAME(f1, f2)

SEC("perf_event")
int walk(struct bpf_perf_event_data *ctx) {
  char frame[48];
  bpf_get_current_comm(frame, sizeof(frame));
  return f1(ctx) + frame[0];
}

char LICENSE[] SEC("license") = "GPL";
