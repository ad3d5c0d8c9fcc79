// expect: accept
// why: bpf_printk (trace_printk) with a format in .rodata from a GPL program
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

SEC("perf_event")
int printk_gpl(struct bpf_perf_event_data *ctx) {
  bpf_printk("period %llu", ctx->sample_period);
  return 1;
}

char LICENSE[] SEC("license") = "GPL";
