// expect: reject EACCES
// why: the callback dereferences the NULL context it was given
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>


static int deref(__u32 index, void *data) {
  __u64 *p = data;
  *p = index;
  return 0;
}

SEC("perf_event")
int loop_null_deref(struct bpf_perf_event_data *ctx) {
  return bpf_loop(3, deref, NULL, 0);
}

char LICENSE[] SEC("license") = "GPL";
