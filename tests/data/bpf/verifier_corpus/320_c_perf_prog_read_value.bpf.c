// expect: accept
// why: perf_prog_read_value into a struct bpf_perf_event_value on the stack
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

SEC("perf_event")
int prog_read_value(struct bpf_perf_event_data *ctx) {
  struct bpf_perf_event_value value;
  if (bpf_perf_prog_read_value(ctx, &value, sizeof(value)) != 0) return 1;
  return value.running == value.enabled;
}

char LICENSE[] SEC("license") = "GPL";
