// expect: reject EINVAL
// why: get_current_task is GPL-only: an MIT program may not call it
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

SEC("perf_event")
int current_task_mit(struct bpf_perf_event_data *ctx) {
  return bpf_get_current_task() != 0;
}

char LICENSE[] SEC("license") = "MIT";
