// expect: accept
// why: a pointer read out of the task (task + 8) and then read through with probe_read_kernel:
// every kernel pointer is a scalar until it is read
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

SEC("perf_event")
int current_task_ptr_arith_read(struct bpf_perf_event_data *ctx) {
  unsigned long task = bpf_get_current_task();
  unsigned long parent = 0;
  int tgid = 0;
  bpf_probe_read_kernel(&parent, sizeof(parent), (const void *)(task + 1280));
  bpf_probe_read_kernel(&tgid, sizeof(tgid), (const void *)(parent + 1268));
  return tgid != 0;
}

char LICENSE[] SEC("license") = "GPL";
