// The recorder's loop and lifetime: attrs and features at the start, the poll over the agents'
// connections, the 15 ms drain of every ring, the end of a connection (exit, exec, orphan), and the
// file's last records at finish. What each agent message does is agent_messages.cpp's.
#include "record/recorder/recorder.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "perfdata/tracing_data.hpp"
#include "record/recorder/connection.hpp"
#include "record/recorder/event_config.hpp"
#include "record/transport.hpp"
#include "support/monotonic_clock.hpp"

namespace userperf::record {

namespace {

constexpr int kDrainIntervalMs = 15;
constexpr std::uint64_t kProgressIntervalNs = 1'000'000'000;
// A connection that ended while its process still ran is said to be the program's doing only if
// the process still runs this much later.
constexpr std::uint64_t kOrphanSaidAfterNs = 100'000'000;

using support::monotonic_ns;

}  // namespace

Recorder::Recorder(int listen_fd, RecordConfig config, perfdata::Writer& writer, std::FILE* log)
    : listen_fd_(listen_fd),
      config_(std::move(config)),
      writer_(writer),
      log_(log),
      buffer_(kMaxMessageSize) {}

Recorder::~Recorder() {
  for (auto& c : connections_) {
    if (c->fd >= 0) close(c->fd);
  }
}

void Recorder::report(const std::string& what) {
  if (log_ != nullptr) std::fprintf(log_, "userperf record: %s\n", what.c_str());
}

void Recorder::report_once(Connection& c, const std::string& what) {
  if (c.reported.insert(what).second) report(what);
}

bool Recorder::begin() {
  if (config_.events.empty()) return false;
  stats_.events.assign(config_.events.size(), EventTotals{});
  std::vector<perfdata::PmuMapping> pmus;
  for (std::size_t i = 0; i < config_.events.size(); ++i) {
    const EventConfig& e = config_.events[i];
    const std::uint64_t synthetic[] = {kSyntheticId};
    const int index = writer_.add_attr(e.attr, i == 0 ? std::span<const std::uint64_t>(synthetic)
                                                      : std::span<const std::uint64_t>());
    if (index < 0) return false;
    writer_.set_event_name(index, e.name);
    bool known = false;
    for (const perfdata::PmuMapping& m : pmus) known = known || m.type == e.attr.type;
    if (!known) pmus.push_back({e.attr.type, pmu_name_of(e)});
  }
  perfdata::Features& features = writer_.features();
  features = perfdata::Features::of_this_host();
  features.pmu_mappings = std::move(pmus);
  return true;
}

void Recorder::accept_all() {
  for (;;) {
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK)
        report(std::string("accept: ") + strerror(errno));
      return;
    }
    auto c = std::make_unique<Connection>();
    c->fd = fd;
    c->number = ++connections_seen_;
    c->id_base = c->number * kIdRange;
    connections_.push_back(std::move(c));
  }
}

bool Recorder::receive_all(Connection& c) {
  for (;;) {
    int fds[kMaxMessageFds];
    int nfds = 0;
    const ssize_t n =
        receive_message(c.fd, buffer_.data(), buffer_.size(), fds, kMaxMessageFds, &nfds);
    if (n == -EAGAIN || n == -EWOULDBLOCK) return true;
    if (n == 0) return false;
    if (n < 0) {
      report_once(c,
                  "connection " + std::to_string(c.number) + ": " + strerror(static_cast<int>(-n)));
      return n == -EMSGSIZE;  // a message too large is dropped; the connection goes on
    }
    const bool ok = handle(c, buffer_.data(), static_cast<std::size_t>(n), fds, nfds);
    if (failed_) return false;
    if (!ok) return false;
  }
}

bool Recorder::write_lost_samples() {
  const std::uint64_t now = monotonic_ns();
  std::uint64_t written = 0;
  for (const auto& [key, t] : thread_totals_) {
    const auto [pid, tid, first_id] = key;
    if (!t.counted) {
      // Killed before it could say: what its LOST records said is all that is known.
      ++stats_.uncounted_threads;
      if (t.ring_lost == 0) continue;
      if (!write_lost_samples_record(pid, tid, t.ring_lost, config_.events.front().attr,
                                     {now, first_id}, writer_)) {
        return !(failed_ = true);
      }
      written += t.ring_lost;
      continue;
    }
    for (std::uint32_t i = 0; i < t.counts.nr_events; ++i) {
      const EventCount& e = t.counts.events[i];
      stats_.events[i].fired += e.count;
      stats_.events[i].lost += e.lost;
      if (e.lost == 0) continue;
      if (!write_lost_samples_record(pid, tid, e.lost, config_.events[i].attr,
                                     {t.counts.time, e.id}, writer_)) {
        return !(failed_ = true);
      }
      written += e.lost;
    }
  }
  stats_.lost_samples = stats_.unsampled + written;
  return true;
}

bool Recorder::write_exit(Connection& c, pid_t tid, std::uint64_t time) {
  if (tid == c.pid) c.main_exit_written = true;
  // The kernel's EXIT names the parent process as both ppid and ptid, for threads too.
  const pid_t ppid = processes_[c.pid].ppid;
  failed_ =
      !write_task(PERF_RECORD_EXIT, c.pid, ppid, tid, ppid, synthetic_attr(), stamp(time), writer_);
  return !failed_;
}

bool Recorder::drain_ring(Connection& c, ThreadRing& ring) {
  DrainCounts counts;
  const Expected<void> drained = ring.drain(writer_, counts);
  stats_.records += counts.records;
  stats_.samples += counts.samples;
  stats_.lost += counts.lost;
  for (std::size_t i = 0; i < stats_.events.size() && i < kMaxThreadEvents; ++i) {
    stats_.events[i].written += counts.samples_of[i];
    stats_.events[i].written_period += counts.period_of[i];
  }
  thread_totals_[{ring.pid(), ring.tid(), ring.first_id()}].ring_lost += counts.lost;
  if (counts.lost_samples != 0) {
    stats_.unsampled += counts.lost_samples;
    UnsampledThread& t = unsampled_[ring.tid()];
    if (t.tid == 0) {
      // Named as it was last called: the thread may be gone by the time its ring says so.
      const auto known = c.comms.find(ring.tid());
      t = {ring.pid(), ring.tid(),
           known != c.comms.end() ? known->second : read_comm(ring.pid(), ring.tid()), 0};
    }
    t.periods += counts.lost_samples;
  }
  if (!drained && writer_.failed()) return !(failed_ = true);
  if (!drained) report_once(c, drained.error().message);
  return true;
}

bool Recorder::drain(Connection& c) {
  for (auto& [tid, ring] : c.rings) {
    if (!drain_ring(c, *ring)) return false;
  }
  return true;
}

bool Recorder::drain_all() {
  for (auto& c : connections_) {
    if (!drain(*c)) return false;
    // An orphaned connection's process ended (or was replaced): its rings are done. One that
    // still runs a while after is said: a process on its way out closes its descriptors before
    // it becomes a zombie, and one killed or ending in _exit says no ProcessExit.
    if (c->orphaned) {
      const auto it = processes_.find(c->pid);
      if (it == processes_.end() || it->second.image != c.get() ||
          !process_running(c->pid, it->second.start_time)) {
        close_connection(*c);
      } else if (monotonic_ns() - c->orphaned_at >= kOrphanSaidAfterNs) {
        report_once(*c,
                    "process " + std::to_string(c->pid) +
                        " closed its connection to the recorder and runs on: its threads' rings "
                        "are still read, threads it starts from now on are not recorded");
      }
    }
  }
  return true;
}

void Recorder::close_connection(Connection& c) {
  // The image is gone (exit, exec, kill -9): what its threads committed is still in the rings.
  drain(c);
  if (c.fd >= 0) close(c.fd);
  c.fd = -1;
  const auto it = processes_.find(c.pid);
  const bool image = it != processes_.end() && it->second.image == &c;
  // Unless the process runs on: then the program closed the agent's socket (a raw close_range),
  // and its threads still sample into the rings this recorder maps.
  if (image && !c.attached && !c.orphaned && !c.exec_pending && !c.exited && !c.rings.empty() &&
      process_running(c.pid, it->second.start_time)) {
    c.orphaned = true;
    c.orphaned_at = monotonic_ns();
    // It cannot say which threads are busy any more: the ticker watches them all.
    for (const auto& [tid, clocks] : c.clocks) ticker_.watch(clocks);
    return;
  }
  c.orphaned = false;
  // Threads heard of that sent no ThreadExit ended with the image: killed by the exit_group after
  // exit() or by an exec (which keeps the main thread alone), or with the process (_exit, a kill,
  // a crash). The kernel writes an EXIT for each there; so does this, now. Not for a process that
  // runs on (an attached agent's detach), nor for an exec'd image's main thread.
  const bool ended =
      c.exited || c.exec_pending || (image && !process_running(c.pid, it->second.start_time));
  if (ended && !failed_) {
    const std::uint64_t now = monotonic_ns();
    for (const auto& [tid, ring] : c.rings) {
      if (tid == c.pid && (c.exec_pending || c.main_exit_written)) continue;
      if (!write_exit(c, tid, now)) break;  // the writer failed: failed_ says so
    }
  }
  // An exec'd image keeps its main thread, which the new image's clock may already have named.
  for (const auto& [tid, ring] : c.rings) {
    if (!(c.exec_pending && tid == c.pid)) ticker_.forget_thread(c.pid, tid);
  }
  c.rings.clear();
  c.clocks.clear();
  c.comms.clear();
  // No process keeps naming this connection as its image, whichever pid it was reached by.
  for (auto& [pid, p] : processes_) {
    if (p.image == &c) p.image = nullptr;
  }
}

void Recorder::abandon() {
  for (auto& c : connections_) {
    c->rings.clear();
    if (c->fd >= 0) close(c->fd);
    c->fd = -1;
  }
  connections_.clear();
  for (auto& [pid, p] : processes_) p.image = nullptr;
}

bool Recorder::run(pid_t child, int* wait_status, const volatile sig_atomic_t* pending_signal,
                   const std::function<void(const RecorderStats&)>& progress) {
  bool signal_forwarded = false;
  bool waitpid_failed = false;
  const bool ran = run_until(
      [&] {
        if (pending_signal != nullptr && *pending_signal != 0 && !signal_forwarded) {
          kill(child, *pending_signal);
          signal_forwarded = true;
        }
        const pid_t done = waitpid(child, wait_status, WNOHANG);
        if (done < 0 && errno != EINTR) {
          report(std::string("waitpid: ") + strerror(errno));
          waitpid_failed = true;
        }
        return done == child || waitpid_failed;
      },
      progress);
  return ran && !waitpid_failed;
}

bool Recorder::run_until(const std::function<bool()>& done,
                         const std::function<void(const RecorderStats&)>& progress) {
  std::uint64_t last_drain = monotonic_ns();
  std::uint64_t last_progress = last_drain;
  for (;;) {
    std::vector<pollfd> fds;
    fds.push_back({listen_fd_, POLLIN, 0});
    for (const auto& c : connections_) fds.push_back({c->fd, POLLIN, 0});  // -1: ignored
    const int n = poll(fds.data(), fds.size(), kDrainIntervalMs);
    if (n < 0 && errno != EINTR) {
      report(std::string("poll: ") + strerror(errno));
      return false;
    }
    if (n > 0) {
      if (fds[0].revents != 0) accept_all();
      for (std::size_t i = 1; i < fds.size(); ++i) {
        Connection& c = *connections_[i - 1];
        if (fds[i].revents == 0) continue;
        if (!receive_all(c)) {
          if (failed_) return false;
          close_connection(c);
        }
      }
      std::erase_if(connections_, [](const auto& c) { return c->fd < 0 && !c->orphaned; });
    }
    const std::uint64_t now = monotonic_ns();
    if (now - last_drain >= kDrainIntervalMs * 1'000'000ULL) {
      // Each pass ends with the file whole up to there: a recorder killed later, or a disk that
      // fills, leaves a file perf reads up to the last pass.
      if (!rescan_mappings(now) || !drain_all()) return false;
      if (!writer_.checkpoint()) return !(failed_ = true);
      last_drain = now;
    }
    if (progress && now - last_progress >= kProgressIntervalNs) {
      progress(stats_);
      last_progress = now;
    }
    if (done()) break;
  }
  // The command is gone (or detached): what its processes said and committed is read before
  // finishing.
  accept_all();
  for (auto& c : connections_) {
    if (c->fd >= 0 && !receive_all(*c) && failed_) return false;
  }
  return drain_all();
}

bool Recorder::finish() {
  if (failed_ || !drain_all()) return false;
  for (auto& c : connections_) close_connection(*c);
  connections_.clear();
  if (!write_lost_samples()) return false;
  perfdata::Features& features = writer_.features();
  std::vector<perfdata::BuildIdEntry> build_ids;
  for (const std::string& path : files_) {
    std::vector<std::uint8_t> id = perfdata::read_build_id(path);
    if (!id.empty()) build_ids.push_back({-1, PERF_RECORD_MISC_USER, std::move(id), path});
  }
  if (!build_ids.empty()) features.build_ids = std::move(build_ids);
  std::vector<perfdata::TracepointFormat> formats;
  for (const auto& [index, format] : tracepoint_formats_) {
    const EventConfig& e = config_.events[index];
    const std::size_t colon = e.name.find(':');
    formats.push_back({e.name.substr(0, colon), e.name.substr(colon + 1), e.attr.config, format});
  }
  if (!formats.empty()) features.tracing_data = perfdata::encode_tracing_data(formats);
  return writer_.finish();
}

}  // namespace userperf::record
