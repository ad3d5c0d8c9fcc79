// BPF_MAP_TYPE_PERF_EVENT_ARRAY: an fd array of events, which bpf_perf_event_output and
// bpf_perf_event_read find with object_at(). A consumer's lookup is -ENOTSUPP, as the kernel's
// (perf event arrays have no map_fd_sys_lookup_elem).
#pragma once

#include "bpf/maps/fd_array.hpp"

namespace userperf::bpf {

class PerfEventArray final : public FdArray {
 public:
  // `spec` has passed check_map_create(); `resolver` must not be null.
  static Expected<std::unique_ptr<Map>> create(const MapSpec& spec,
                                               std::shared_ptr<FdResolver> resolver);

 private:
  using FdArray::FdArray;
};

}  // namespace userperf::bpf
