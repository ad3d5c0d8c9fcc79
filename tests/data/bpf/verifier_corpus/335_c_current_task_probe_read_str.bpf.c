// expect: accept
// why: the task's comm read with the legacy probe_read_str (kernel memory above TASK_SIZE on x86-64)
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

SEC("perf_event")
int current_task_probe_read_str(struct bpf_perf_event_data *ctx) {
  unsigned long task = bpf_get_current_task();
  char comm[16];
  long n = bpf_probe_read_str(comm, sizeof(comm), (const void *)(task + 3024));
  return n > 0 && comm[0] != 0;
}

char LICENSE[] SEC("license") = "GPL";
