// expect: accept
// why: a field of the current task read with probe_read_kernel at an offset from the task
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

SEC("perf_event")
int current_task_probe_read_kernel(struct bpf_perf_event_data *ctx) {
  unsigned long task = bpf_get_current_task();
  int pid = 0;
  if (bpf_probe_read_kernel(&pid, sizeof(pid), (const void *)(task + 1264)) != 0) return 0;
  return pid > 1;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
