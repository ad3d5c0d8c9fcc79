// SIGNAL-SAFE: LogPmu::write, LogPmu::write_thread and LogPmu::dump_for_crash.
#include "pmu/aux_sources/log_pmu.hpp"

#include <unistd.h>

#include <atomic>
#include <cerrno>

#include "pmu/aux_sources/source_table.hpp"
#include "ring/aux_reader.hpp"
#include "support/task_ids.hpp"
#include "trace/log_format.hpp"

namespace userperf::pmu {

namespace {

struct LogSource final : core::AuxSourcePmu::Source {
  using Source::Source;
  std::atomic<int> crash_fd{-1};
};

// As many as calltrace's traced threads: `userperf record --aux log` opens one per thread.
constexpr std::size_t kMaxLogs = 256;
constinit SourceTable<LogSource, kMaxLogs> g_logs;

// The log event behind fd; call inside a guard on g_logs.grace().
LogSource* find_log(int fd) {
  return g_logs.find([fd](LogSource& s) { return s.event.fd == fd; });
}

// write(2) until done or failed (EINTR retried).
void write_all(int fd, const std::uint8_t* p, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

}  // namespace

int LogPmu::event_bind(core::Event& event) {
  auto source = std::make_unique<LogSource>(event, engine_.grace_period());
  if (!g_logs.insert(source.get())) return -EMFILE;
  attach(event, std::move(source));
  return 0;
}

void LogPmu::unpublish(Source& source) {
  g_logs.remove(static_cast<LogSource*>(&source));
  g_logs.synchronize();
}

namespace {

// Appends one record to the log `find` returns (called inside the table's guard). SIGNAL-SAFE.
template <class Find>
int append(const void* data, std::size_t len, int missing, Find&& find) {
  if (len > trace::kLogMaxPayload) return -EMSGSIZE;
  if (data == nullptr && len != 0) return -EFAULT;
  const int saved_errno = errno;
  core::OutputGuard guard(g_logs.grace());
  LogSource* s = find();
  if (s == nullptr) return missing;
  std::uint8_t prefix[trace::kLogMaxPrefix];
  const std::size_t prefix_len = trace::log_record_prefix(
      static_cast<std::uint32_t>(support::current_tid()), s->event.clock_now(), len, prefix);
  const core::AuxStream::Append result = s->stream.append(prefix, prefix_len, data, len);
  errno = saved_errno;
  switch (result) {
    case core::AuxStream::Append::kOk:
      s->event.count.fetch_add(1, std::memory_order_relaxed);
      return 0;
    case core::AuxStream::Append::kStopped:
      return -ENOTCONN;
    case core::AuxStream::Append::kTooBig:
      return -EMSGSIZE;
    case core::AuxStream::Append::kFull:
      return -ENOSPC;
    default:
      return -EAGAIN;
  }
}

}  // namespace

int LogPmu::write(int fd, const void* data, std::size_t len) {
  return append(data, len, -EBADF, [fd] { return find_log(fd); });
}

int LogPmu::write_thread(const void* data, std::size_t len) {
  return append(data, len, -ENOTCONN, [] {
    const pid_t tid = support::current_tid();
    return g_logs.find([tid](LogSource& s) { return s.event.pid == tid; });
  });
}

std::int64_t LogPmu::area_size(int fd) {
  core::OutputGuard guard(g_logs.grace());
  LogSource* s = find_log(fd);
  if (s == nullptr) return -EBADF;
  const ring::AuxRing* aux = s->event.aux_area();
  return aux != nullptr ? static_cast<std::int64_t>(aux->size()) : -ENODATA;
}

int LogPmu::set_crash_fd(int fd, int out_fd) {
  core::OutputGuard guard(g_logs.grace());
  LogSource* s = find_log(fd);
  if (s == nullptr) return -EBADF;
  s->crash_fd.store(out_fd, std::memory_order_release);
  return 0;
}

void LogPmu::dump_for_crash() {
  const int saved_errno = errno;
  core::OutputGuard guard(g_logs.grace());
  g_logs.for_each([](LogSource& s) {
    const int out = s.crash_fd.load(std::memory_order_acquire);
    if (out < 0) return;
    const ring::AuxRing* aux = s.event.aux_area();
    if (aux == nullptr) return;
    // Bytes below the write position are complete; the oldest may be overwritten meanwhile by
    // another thread, which the decoder skips as the tail of an earlier record.
    const std::uint64_t end = aux->write_position();
    const std::uint64_t n = aux->history();  // at most the area's size
    ring::for_each_aux_piece(end, n, aux->size(), [&](std::uint64_t offset, std::uint64_t len) {
      write_all(out, aux->data() + offset, len);
    });
  });
  errno = saved_errno;
}

}  // namespace userperf::pmu
