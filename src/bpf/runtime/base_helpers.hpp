// The helpers that need nothing of perf: map operations, time, task identity, random numbers,
// reads of untrusted user memory that fail instead of faulting, trace_printk and the ringbuf
// helpers. SIGNAL-SAFE: each runs on the overflow path; the only syscalls are process_vm_readv,
// getpid/gettid caches' first fill, prctl(PR_GET_NAME), clock_gettime (vDSO) and the trace sink's
// write.
#pragma once

#include <cstdint>
#include <vector>

#include "bpf/isa/helper_call.hpp"

namespace userperf::bpf {

// A helper's pointer argument, and a negative errno as its u64 return value.
inline void* helper_ptr(std::uint64_t v) {
  return reinterpret_cast<void*>(v);
}
inline std::uint64_t helper_error(int err) {
  return static_cast<std::uint64_t>(-static_cast<std::int64_t>(err));
}

// Puts fn at table[id], growing the table.
inline void set_helper(std::vector<HelperFn>& table, int id, HelperFn fn) {
  if (table.size() <= static_cast<std::size_t>(id)) table.resize(static_cast<std::size_t>(id) + 1);
  table[static_cast<std::size_t>(id)] = fn;
}

// bpf_probe_read_user(_str): user memory of this process, read without faulting (-EFAULT and dst
// zeroed when unreadable). Also the user half of the legacy probe_read (perf_helpers.cpp).
std::uint64_t probe_read_user(std::uint64_t dst, std::uint64_t size, std::uint64_t src,
                              std::uint64_t, std::uint64_t, CallContext& call);
std::uint64_t probe_read_user_str(std::uint64_t dst, std::uint64_t size, std::uint64_t src,
                                  std::uint64_t, std::uint64_t, CallContext& call);

// Fills `table` (indexed by helper id, grown as needed) with every helper that needs no program
// type's context.
void add_base_helpers(std::vector<HelperFn>& table);

// Where trace_printk's lines go (the kernel's trace_pipe): a descriptor, stderr by default.
void set_trace_printk_fd(int fd);

}  // namespace userperf::bpf
