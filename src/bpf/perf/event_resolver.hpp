// PERF_EVENT_ARRAY slots hold userperf events: the descriptor a consumer stores becomes a
// reference to the engine's event (kept alive past close(fd), as the kernel's map holds the file).
#pragma once

#include "bpf/maps/map.hpp"
#include "core/engine.hpp"

namespace userperf::bpf {

class EventResolver : public FdResolver {
 public:
  explicit EventResolver(core::Engine& engine) : engine_(engine) {}
  // -EBADF for a descriptor that is no userperf event; an inherited event cannot be read from
  // the overflow path (-EOPNOTSUPP), as the kernel's perf_event_read_local probe at update time.
  Expected<void*> get(int fd) override;
  void put(void* object) override;

 private:
  core::Engine& engine_;
};

}  // namespace userperf::bpf
