// The helpers only perf_event programs have (pe_prog_func_proto): bpf_perf_event_output into a
// PERF_EVENT_ARRAY of BPF_OUTPUT events, bpf_get_stackid / bpf_get_stack from the sample's
// callchain, bpf_perf_prog_read_value; and bpf_get_current_task with the kernel-memory reads of its
// synthetic task (current_task.hpp: probe_read_kernel(_str), the legacy probe_read(_str)); the
// thread's cgroup v2 (current_cgroup.hpp: get_current_cgroup_id, get_current_ancestor_cgroup_id,
// current_task_under_cgroup with a CGROUP_ARRAY). Each
// finds its overflow through CallContext::env, a PerfEventRunCtx. SIGNAL-SAFE.
#pragma once

#include <vector>

#include "bpf/isa/helper_call.hpp"

namespace userperf::bpf {

void add_perf_event_helpers(std::vector<HelperFn>& table);

// Every helper a perf_event program may call: the base set and the perf ones.
std::vector<HelperFn> perf_event_helper_table();

}  // namespace userperf::bpf
