// User tracepoints the recorder asked for: named to the tracepoint PMU before any thread opens
// them, and their formats forwarded to the recorder (TracepointMessage) as the program registers
// them.
#pragma once

#include "record/agent/session.hpp"

namespace userperf::record::agent {

// Defines each PERF_TYPE_TRACEPOINT event of the config (id = attr.config) and installs the
// format callback. Once per session (a fork child's engine is new).
void define_tracepoints(Session& session);

}  // namespace userperf::record::agent
