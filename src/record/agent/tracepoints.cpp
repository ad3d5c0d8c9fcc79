#include "record/agent/tracepoints.hpp"

#include <cstring>
#include <vector>

#include "pmu/tracepoint/tracepoint_pmu.hpp"

namespace userperf::record::agent {
namespace {

bool is_tracepoint(const EventConfig& event) {
  return event.attr.type == PERF_TYPE_TRACEPOINT;
}

// Called by the tracepoint PMU after it released its lock, so a failed send may take the session
// idle at once (from a library's constructor under dlopen no caller would do it later); inside
// start_thread's ScopedEngineCallback it only marks the session.
void send_format(std::uint64_t id, const char* format, std::size_t size) {
  Session* session = current_session();
  if (session == nullptr || format == nullptr) return;
  const auto& events = session->config.events;
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (!is_tracepoint(events[i]) || events[i].attr.config != id) continue;
    const std::size_t total = sizeof(TracepointMessage) + size;
    if (total > kMaxMessageSize) {
      say("the format of %s is too long to send", events[i].name.c_str());
      return;
    }
    std::vector<char> bytes(total);
    TracepointMessage message;
    message.header.size = static_cast<std::uint32_t>(total);
    message.config_index = static_cast<std::uint32_t>(i);
    message.format_size = static_cast<std::uint32_t>(size);
    std::memcpy(bytes.data(), &message, sizeof message);
    std::memcpy(bytes.data() + sizeof message, format, size);
    send(*session, bytes.data(), bytes.size());
    return;
  }
}

}  // namespace

void define_tracepoints(Session& session) {
  // The callback first: a descriptor that registered before the agent (in a library the program
  // links) binds inside tracepoint_define, and its format is reported then, once.
  bool callback_set = false;
  for (const EventConfig& event : session.config.events) {
    if (!is_tracepoint(event)) continue;
    if (!callback_set) pmu::tracepoint_set_format_callback(send_format);
    callback_set = true;
    pmu::tracepoint_define(event.attr.config, event.name);
  }
}

}  // namespace userperf::record::agent
