// expect: reject EACCES
// why: get_current_task's result is a scalar: a direct load through it is an invalid access
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

SEC("perf_event")
int current_task_deref(struct bpf_perf_event_data *ctx) {
  const volatile int *task = (const volatile int *)bpf_get_current_task();
  return task[4];
}

char LICENSE[] SEC("license") = "GPL";
