// The user tracepoint entry points of include/userperf/tracepoint.h over the tracepoint PMU's
// registry. Exported with default visibility: programs reach them through weak references, and the
// agent library (built with hidden visibility or not) must export them.
#define USERPERF_TRACEPOINT_IMPLEMENTATION
#include "userperf/tracepoint.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "pmu/tracepoint/tracepoint_pmu.hpp"
#include "support/expected.hpp"

#define USERPERF_EXPORT __attribute__((visibility("default")))

extern "C" {

USERPERF_EXPORT int userperf_tracepoint_register(struct userperf_tracepoint* tp) {
  return userperf::syscall_return(tp != nullptr ? userperf::pmu::tracepoint_register(*tp)
                                                : -EINVAL);
}

USERPERF_EXPORT void userperf_tracepoint_unregister(struct userperf_tracepoint* tp) {
  if (tp != nullptr) userperf::pmu::tracepoint_unregister(*tp);
}

USERPERF_EXPORT void userperf_tracepoint_fire(const struct userperf_tracepoint* tp,
                                              const void* const* args, const void* call_site) {
  userperf::pmu::tracepoint_fire(*tp, args, reinterpret_cast<std::uint64_t>(call_site));
}

USERPERF_EXPORT int userperf_tracepoint_check(const struct userperf_tracepoint* tp, char* why,
                                              size_t why_size) {
  const userperf::Expected<void> checked = tp != nullptr
                                               ? userperf::pmu::tracepoint_check(*tp)
                                               : userperf::make_error(EINVAL, "no descriptor");
  if (checked) return 0;
  if (why != nullptr && why_size > 0) {
    const std::string& reason = checked.error().message;
    const std::size_t n = std::min(reason.size(), why_size - 1);
    std::memcpy(why, reason.data(), n);
    why[n] = '\0';
  }
  return userperf::syscall_return(-checked.error().code);
}

}  // extern "C"
