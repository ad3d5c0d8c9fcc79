// expect: accept
// why: get_current_task (GPL-only) from a GPL program, its result compared as a scalar
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

SEC("perf_event")
int current_task_gpl(struct bpf_perf_event_data *ctx) {
  return bpf_get_current_task() != 0;
}

char LICENSE[] SEC("license") = "GPL";
