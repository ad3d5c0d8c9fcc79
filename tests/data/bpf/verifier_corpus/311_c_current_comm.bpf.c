// expect: accept
// why: get_current_comm into a stack buffer, then reading the buffer
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

SEC("perf_event")
int current_comm(struct bpf_perf_event_data *ctx) {
  char comm[16];
  if (bpf_get_current_comm(comm, sizeof(comm)) != 0) return 0;
  return comm[0] == 'u';
}

char LICENSE[] SEC("license") = "GPL";
