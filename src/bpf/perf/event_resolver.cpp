#include "bpf/perf/event_resolver.hpp"

#include <string>

namespace userperf::bpf {

Expected<void*> EventResolver::get(int fd) {
  core::Event* event = engine_.get_event(fd);
  if (event == nullptr)
    return make_error(EBADF, "descriptor " + std::to_string(fd) + " is no event");
  if (event->attr.inherit) {
    engine_.put_event(event);
    return make_error(EOPNOTSUPP, "an inherited event cannot be a perf event array entry");
  }
  return static_cast<void*>(event);
}

void EventResolver::put(void* object) {
  engine_.put_event(static_cast<core::Event*>(object));
}

}  // namespace userperf::bpf
