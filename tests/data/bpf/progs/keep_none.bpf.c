// Drops every sample of a real recording (record_test.sh bpf): a period no clock produces is the
// only one kept, so any sample in the file means the program did not run, or faulted (a fault
// keeps the sample). The comparison has a 32-bit immediate: the JIT blinds it.
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

SEC("perf_event")
int keep_none(struct bpf_perf_event_data* ctx) {
  return ctx->sample_period == 0x5eed5eed;
}

char LICENSE[] SEC("license") = "GPL";
