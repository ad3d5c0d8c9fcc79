// The log source (PMU "log"): an application's own records (trace/log_format.hpp) in the event's
// AUX area. Mapped read-only (overwrite mode) the area is a flight recorder: it always holds the
// newest records, and aux_head follows every record, so a process that maps the memfds (or this
// process's crash handler) finds them even if the writer dies. attr.config must be 0.
// Records come from any thread; the event's count is the number of records stored.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "core/aux_source_pmu.hpp"

namespace userperf::pmu {

class LogPmu final : public core::AuxSourcePmu {
 public:
  using core::AuxSourcePmu::AuxSourcePmu;
  const char* name() const override { return "log"; }
  int event_bind(core::Event& event) override;

  // Appends one record to the log event `fd`: 0, -EBADF (no log event), -EMSGSIZE (longer than
  // 65535 bytes or than the area), -ENOTCONN (disabled, or no AUX area), -ENOSPC (normal mode:
  // full; the event is now disabled), -EAGAIN (the area is busy: a nested or stalled writer).
  // SIGNAL-SAFE.
  static int write(int fd, const void* data, std::size_t len);
  // Appends one record to the calling thread's own log: the first log event opened on exactly
  // this thread (pid = its tid). The errors of write(), -ENOTCONN when there is none.
  // SIGNAL-SAFE.
  static int write_thread(const void* data, std::size_t len);
  // The size of the log event's AUX area: > 0, -EBADF, or -ENODATA (not mapped).
  static std::int64_t area_size(int fd);
  // Marks the log event `fd` for the crash dump (out_fd >= 0) or unmarks it (-1). -EBADF if none.
  static int set_crash_fd(int fd, int out_fd);
  // Writes the newest bytes of every marked log to its crash fd with write(2) only. SIGNAL-SAFE.
  static void dump_for_crash();

 protected:
  void unpublish(Source& source) override;
};

}  // namespace userperf::pmu
