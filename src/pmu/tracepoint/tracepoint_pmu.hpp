// User tracepoints (PMU PERF_TYPE_TRACEPOINT; the header is include/userperf/tracepoint.h).
//
// Two name spaces meet here: programs register descriptors by name ("provider:name"), and the
// recorder gives names ids (tracepoint_define, the same id in every process; attr.config of an
// event is one). A descriptor is bound to its id when both are known, whichever comes second; the
// format callback then gets the libtraceevent "format" text of that id, once. The descriptor's
// `enabled` word is set while the id has events.
//
// Events are per thread (pid = a thread of this process; pid -1 is EOPNOTSUPP); an undefined id
// is EINVAL, branch sampling EOPNOTSUPP (the kernel's perf_tp_event_init / perf_trace_init).
// Firing writes, for every active event of the calling thread and that id, a sample whose RAW
// field is the tracepoint record (common header with common_type = id and common_pid = tid, then
// the fields at the format's offsets, then the __data_loc data), built from fragments that point
// at the arguments (no staging copy); IP is the call site of userperf_tracepoint_fire.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/engine.hpp"
#include "core/pmu.hpp"
#include "pmu/tracepoint/tracepoint_descriptor.hpp"

namespace userperf::pmu {

using TracepointFormatCallback = void (*)(std::uint64_t id, const char* format, std::size_t size);

// Gives "provider:name" the id `id`. Ids are at most 65535 (common_type is 16 bits); an id or a
// name defined before with another partner is ignored. Not from a signal handler.
void tracepoint_define(std::uint64_t id, const std::string& name);
// Called once per id when its descriptor and definition meet (possibly inside
// tracepoint_define or userperf_tracepoint_register). nullptr: none.
void tracepoint_set_format_callback(TracepointFormatCallback callback);

// The registry behind the C entry points of tracepoint.h (userperf_tracepoint_*).
int tracepoint_register(userperf_tracepoint& tp);
void tracepoint_unregister(userperf_tracepoint& tp);
// SIGNAL-SAFE.
void tracepoint_fire(const userperf_tracepoint& tp, const void* const* args, std::uint64_t ip);

class TracepointPmu final : public core::Pmu {
 public:
  explicit TracepointPmu(core::Engine& engine) : engine_(engine) {}
  const char* name() const override { return "tracepoint"; }
  int event_init(core::Event& event) override;
  int event_bind(core::Event& event) override;
  int add(core::Event& event) override;
  void del(core::Event& event) override;
  void destroy(core::Event& event) override;

  core::Engine& engine() { return engine_; }

 private:
  core::Engine& engine_;
};

}  // namespace userperf::pmu
