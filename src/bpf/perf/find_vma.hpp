// bpf_find_vma(task, addr, callback, ctx, flags) (helper 180) as a callback driver of the
// interpreter (vm/interpreter.hpp), and the probe loads' read of the synthetic kernel memory.
//
// flags != 0: -EINVAL. The kernel searches any task's mm; userperf models only the calling
// process: a task other than the calling thread's or its group leader's synthetic task gives
// -ENOENT (what the kernel returns for a task without an mm). No mapping of the process holds addr:
// -ENOENT. Otherwise the callback runs once with (task, vma, ctx), the vma the synthetic
// vm_area_struct of current_task.hpp, and the helper returns 0.
#pragma once

#include <cstdint>

#include "bpf/perf/current_task.hpp"
#include "bpf/vm/interpreter.hpp"

namespace userperf::bpf {

const CallbackDriver& find_vma_driver();

// The mapping of /proc/self/maps that holds addr, read with open/read/close into a bounded stack
// buffer and parsed line by line: no allocation, no lock (a signal handler may run it). Not
// cached: mappings change with every mmap/munmap of any thread, and no signal-safe notification
// of those exists to invalidate a cache with. False: none (or /proc unreadable).
bool find_mapping(std::uint64_t addr, FoundVma& out);

// ProbeRead of the perf runs (env: a PerfEventRunCtx).
bool probe_read_synthetic(void* env, std::uint64_t addr, void* dst, std::uint64_t size);

}  // namespace userperf::bpf
