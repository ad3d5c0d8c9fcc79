// expect: reject EINVAL
// why: a bpf_loop callback with global linkage: the kernel wants callbacks static
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>


__attribute__((noinline)) int global_cb(__u32 index, void *data) {
  return 0;
}

SEC("perf_event")
int loop_global_cb(struct bpf_perf_event_data *ctx) {
  __u64 v = 0;
  return bpf_loop(2, global_cb, &v, 0);
}

char LICENSE[] SEC("license") = "GPL";
