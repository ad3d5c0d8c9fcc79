#include "record/recorder/recorder.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "perfdata/tracing_data.hpp"
#include "record/recorder/event_config.hpp"
#include "record/transport.hpp"
#include "support/monotonic_clock.hpp"

namespace userperf::record {

namespace {

constexpr int kDrainIntervalMs = 15;
// How often each live process's /proc/PID/maps is read again for objects it loaded (dlopen).
constexpr std::uint64_t kMapsRescanNs = 100'000'000;
constexpr std::uint64_t kProgressIntervalNs = 1'000'000'000;
// A connection that ended while its process still ran is said to be the program's doing only if
// the process still runs this much later.
constexpr std::uint64_t kOrphanSaidAfterNs = 100'000'000;
constexpr std::uint64_t kIdRange = std::uint64_t{1} << 32;

using support::monotonic_ns;

void close_fds(int* fds, int nfds) {
  for (int i = 0; i < nfds; ++i) {
    if (fds[i] >= 0) close(fds[i]);
  }
}

template <class T>
bool read_message(const std::uint8_t* bytes, std::size_t size, T& out) {
  if (size != sizeof(T)) return false;
  std::memcpy(&out, bytes, sizeof out);
  return true;
}

}  // namespace

struct Recorder::Connection {
  int fd = -1;
  std::uint64_t number = 0;
  std::uint64_t id_base = 0;
  pid_t pid = 0;  // 0 until Hello
  bool welcomed = false;
  bool inherits = false;  // a fork child: its events carry ids its parent's ThreadStart named
  // An agent loaded into a running process (record -p): its connection ends at a detach, an exec
  // or the process's exit, never because the program closed it. Its clocks are poked by its own
  // ticker thread, never by this recorder: a poke that raced an exec would reach a program that
  // does not catch the signal (an in-process poke is discarded by the exec).
  bool attached = false;
  bool main_exit_written = false;
  // The connection ended while its process runs on (the program closed the agent's socket with a
  // raw system call): its rings are still drained until the process ends or execs.
  bool orphaned = false;
  std::uint64_t orphaned_at = 0;  // CLOCK_MONOTONIC when it was found orphaned
  bool exited = false;            // its ProcessExit came: the end of the connection is the exit
  bool exec_pending = false;      // an ExecNotice came: the end of this connection is an exec
  std::map<pid_t, std::unique_ptr<ThreadRing>> rings;  // by tid
  std::map<pid_t, ThreadClocks> clocks;                // by tid: those with a clock
  std::map<pid_t, std::string> comms;                  // by tid: the last name it was given
  std::set<std::string> reported;                      // problems said once
};

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

bool Recorder::handle(Connection& c, const std::uint8_t* bytes, std::size_t size, int* fds,
                      int nfds) {
  MessageHeader header;
  if (size < sizeof header) {
    close_fds(fds, nfds);
    report_once(c, "a message of " + std::to_string(size) + " bytes has no header");
    return false;
  }
  std::memcpy(&header, bytes, sizeof header);
  const auto type = static_cast<MessageType>(header.type);
  const std::string from = "process " + std::to_string(c.pid) + ": ";
  if (header.size != size) {
    close_fds(fds, nfds);
    report_once(c, from + "message type " + std::to_string(header.type) + " says " +
                       std::to_string(header.size) + " bytes, has " + std::to_string(size));
    return false;
  }
  if (type != MessageType::kThreadStart) {
    close_fds(fds, nfds);
    nfds = 0;
  }
  if (!c.welcomed && type != MessageType::kHello) {
    close_fds(fds, nfds);
    report_once(c, "connection " + std::to_string(c.number) + " spoke before Hello");
    return false;
  }
  switch (type) {
    case MessageType::kHello: {
      HelloMessage m;
      if (c.welcomed || !read_message(bytes, size, m)) break;
      return on_hello(c, m);
    }
    case MessageType::kThreadStart: {
      ThreadStartMessage m;
      if (!read_message(bytes, size, m)) {
        close_fds(fds, nfds);
        break;
      }
      return on_thread_start(c, m, fds, nfds);
    }
    case MessageType::kThreadExit: {
      ThreadExitMessage m;
      if (!read_message(bytes, size, m)) break;
      return on_thread_exit(c, m);
    }
    case MessageType::kComm: {
      CommMessage m;
      if (!read_message(bytes, size, m) || m.pid != c.pid) break;
      const std::string comm(m.comm, strnlen(m.comm, sizeof m.comm));
      c.comms[m.tid] = comm;
      if (m.tid == m.pid) processes_[m.pid].comm = comm;
      failed_ = !write_comm(m.pid, m.tid, comm, 0, synthetic_attr(), stamp(m.time), writer_);
      return !failed_;
    }
    case MessageType::kTracepoint: {
      TracepointMessage m;
      if (size < sizeof m) break;
      std::memcpy(&m, bytes, sizeof m);
      if (m.format_size != size - sizeof m || m.config_index >= config_.events.size() ||
          config_.events[m.config_index].attr.type != PERF_TYPE_TRACEPOINT) {
        break;
      }
      tracepoint_formats_[m.config_index].assign(reinterpret_cast<const char*>(bytes + sizeof m),
                                                 m.format_size);
      return true;
    }
    case MessageType::kExecNotice: {
      ExecNoticeMessage m;
      if (!read_message(bytes, size, m) || m.pid <= 0) break;
      // The image's own exec (not a vfork child's through it): its connection's end is no orphan.
      if (m.pid == c.pid) c.exec_pending = m.failed == 0;
      const auto target = static_cast<ExecTarget>(m.target);
      if (m.failed != 0 || target == ExecTarget::kEnterable || target == ExecTarget::kUnknown) {
        if (m.failed != 0) unrecorded_.erase(m.pid);  // the process goes on, recorded
        return true;
      }
      const std::string path(m.path, strnlen(m.path, sizeof m.path));
      const std::size_t slash = path.rfind('/');
      unrecorded_[m.pid] = {path.substr(slash == std::string::npos ? 0 : slash + 1),
                            describe(target)};
      return true;
    }
    case MessageType::kBusyClock: {
      BusyClockMessage m;
      if (!read_message(bytes, size, m)) break;
      on_busy_clock(c, m);
      return true;
    }
    case MessageType::kEventCounts: {
      EventCountsMessage m;
      if (!read_message(bytes, size, m)) break;
      on_event_counts(c, m);
      return true;
    }
    case MessageType::kProcessExit: {
      ProcessExitMessage m;
      if (!read_message(bytes, size, m) || m.pid != c.pid) break;
      c.exited = true;
      if (!drain(c)) return false;
      return c.main_exit_written || write_exit(c, c.pid, m.time);
    }
    default:
      report_once(c, from + "unknown message type " + std::to_string(header.type) + " ignored");
      return true;
  }
  report_once(c, from + "malformed message type " + std::to_string(header.type) + " ignored");
  return true;
}

// The process's state is read before it is welcomed: until the answer comes it waits, so even one
// that lives a millisecond cannot exit or exec under the reads.
bool Recorder::on_hello(Connection& c, const HelloMessage& m) {
  if (m.inherits != 0) {
    // A fork child waits for nothing: its ids are its parent's, its state its parent's.
    if (m.version != kProtocolVersion || m.pid <= 0 || m.parent_tid <= 0) {
      report_once(c, "connection " + std::to_string(c.number) + ": a fork child's Hello refused");
      return false;
    }
    c.pid = m.pid;
    c.inherits = true;
    c.welcomed = true;
    unrecorded_.erase(m.pid);
    return write_image_state(c, m);
  }
  WelcomeMessage welcome;
  welcome.id_base = c.id_base;
  welcome.accepted = m.version == kProtocolVersion && m.pid > 0 ? 1 : 0;
  if (welcome.accepted == 0) {
    report_once(c, "connection " + std::to_string(c.number) + ": protocol version " +
                       std::to_string(m.version) + " refused");
    send_message(c.fd, &welcome, sizeof welcome);
    return false;
  }
  c.pid = m.pid;
  c.attached = m.attached != 0;
  unrecorded_.erase(m.pid);  // an image of it runs with the agent after all
  if (!write_image_state(c, m)) return false;
  if (send_message(c.fd, &welcome, sizeof welcome) != 0) return false;
  c.welcomed = true;
  return true;
}

bool Recorder::write_image_state(Connection& c, const HelloMessage& m) {
  auto [it, fresh] = processes_.try_emplace(m.pid);
  Process& p = it->second;
  const SyntheticStamp s = stamp(m.time);
  const std::uint64_t start_time = read_start_time(m.pid);
  // A pid seen before is the same process after exec only if it is no fork child and started
  // when the one seen did; otherwise the pid was reused by a new process.
  if (!fresh && (m.parent_tid != 0 || start_time != p.start_time)) {
    p = Process{};
    fresh = true;
  }
  p.start_time = start_time;
  if (!fresh) {
    // The process exec'd. Its old image's connection ends on its own.
    p.image = &c;
    const std::string comm = read_comm(m.pid, m.pid);
    p.comm = comm;
    if (!write_comm(m.pid, m.pid, comm, PERF_RECORD_MISC_COMM_EXEC, synthetic_attr(), s, writer_)) {
      return !(failed_ = true);
    }
    p.mappings.clear();
    p.maps_read_at = m.time;
    return write_new_mappings(m.pid, m.time, true);
  }
  ++stats_.processes;
  p.ppid = m.ppid;
  p.image = &c;
  // A child whose fork side said nothing (it exec'd or ended before its first sample, its parent
  // was not heard of yet, or posix_spawn or vfork started it) still has the FORK the kernel
  // writes, from its parent's main thread (which thread forked is not known). Not for the
  // command (the recorder's child) or a process attached with -p.
  const pid_t forking_tid = m.parent_tid != 0                                     ? m.parent_tid
                            : m.attached == 0 && m.ppid > 1 && m.ppid != getpid() ? m.ppid
                                                                                  : 0;
  if (forking_tid != 0 && !write_task(PERF_RECORD_FORK, m.pid, m.ppid, m.pid, forking_tid,
                                      synthetic_attr(), s, writer_)) {
    return !(failed_ = true);
  }
  // A fork child has its parent's address space: the parent's mappings, as last read, without a
  // read of its own (a shell's fork child lives only until it execs). The 100 ms rescan adds what
  // the parent mapped since.
  if (const auto parent = processes_.find(m.ppid);
      m.parent_tid != 0 && parent != processes_.end() && parent->second.image != nullptr) {
    p.mappings = parent->second.mappings;
    p.maps_read_at = m.time;
    // The kernel gives a fork child the forking thread's name: no /proc read for it either.
    p.comm = known_comm(m.ppid, m.parent_tid);
    if (p.comm.empty()) p.comm = read_comm(m.pid, m.pid);
    if (!write_comm(m.pid, m.pid, p.comm, 0, synthetic_attr(), s, writer_)) {
      return !(failed_ = true);
    }
    for (const FileMapping& mapping : p.mappings) {
      if (!write_mmap2(m.pid, mapping, synthetic_attr(), s, writer_)) return !(failed_ = true);
    }
    return true;
  }
  SynthesisResult result;
  if (!synthesize_process(m.pid, synthetic_attr(), s, writer_, &result)) {
    if (writer_.failed()) return !(failed_ = true);
    // Only a process killed while it waited for its Welcome gets here.
    report_once(c, "process " + std::to_string(m.pid) + " vanished before its state was read");
    return true;
  }
  for (const FileMapping& mapping : result.mappings) {
    if (mapping.path != kAnonymousMapping) files_.insert(mapping.path);
  }
  p.mappings = std::move(result.mappings);
  p.comm = read_comm(m.pid, m.pid);
  p.maps_read_at = m.time;
  return true;
}

std::string Recorder::known_comm(pid_t pid, pid_t tid) {
  const auto it = processes_.find(pid);
  if (it == processes_.end()) return {};
  if (tid != pid && it->second.image != nullptr) {
    const auto& comms = it->second.image->comms;
    if (const auto named = comms.find(tid); named != comms.end()) return named->second;
  }
  return it->second.comm;
}

// Objects loaded since the last read (dlopen) get their MMAP2s stamped with that read's time: the
// mapping appeared after it, so every sample that can lie in it comes later.
bool Recorder::rescan_mappings(std::uint64_t now) {
  for (auto& [pid, p] : processes_) {
    if (p.image == nullptr || now - p.maps_read_at < kMapsRescanNs) continue;
    const std::uint64_t since = p.maps_read_at;
    p.maps_read_at = now;
    if (!write_new_mappings(pid, since, false)) return false;
  }
  return true;
}

bool Recorder::write_new_mappings(pid_t pid, std::uint64_t time, bool all) {
  Process& p = processes_[pid];
  std::vector<FileMapping> now;
  if (!read_file_mappings(pid, now)) return true;  // gone: nothing left to name
  for (const FileMapping& m : now) {
    bool known = false;
    if (!all) {
      for (const FileMapping& old : p.mappings) known = known || old == m;
    }
    if (known) continue;
    if (!write_mmap2(pid, m, synthetic_attr(), stamp(time), writer_)) return !(failed_ = true);
    if (m.path != kAnonymousMapping) files_.insert(m.path);
  }
  p.mappings = std::move(now);
  return true;
}

bool Recorder::on_thread_start(Connection& c, const ThreadStartMessage& m, int* fds, int nfds) {
  const std::string who =
      "thread " + std::to_string(m.tid) + " of process " + std::to_string(c.pid);
  // Only the ring is read: AUX data reaches the file inside PERF_SAMPLE_AUX samples.
  const int ring_fd = nfds > 0 ? fds[0] : -1;
  for (int i = 1; i < nfds; ++i) close(fds[i]);
  auto refuse = [&](const std::string& why) {
    if (ring_fd >= 0) close(ring_fd);
    report_once(c, who + ": ThreadStart refused: " + why);
    return true;
  };
  if (m.pid != c.pid || m.tid <= 0) return refuse("not this process's thread");
  if (ring_fd < 0 || nfds != 1 + static_cast<int>(m.has_aux != 0)) {
    return refuse("expected " + std::to_string(1 + (m.has_aux != 0)) + " descriptors, got " +
                  std::to_string(nfds));
  }
  if (m.nr_events == 0 || m.nr_events > kMaxThreadEvents) return refuse("bad event count");
  if (c.rings.count(m.tid) != 0) return refuse("the thread already has a ring");
  for (std::uint32_t i = 0; i < m.nr_events; ++i) {
    const EventId& e = m.events[i];
    if (e.config_index >= config_.events.size()) return refuse("bad config index");
    bool repeated = false;  // within this message: ids_ learns them only once all are checked
    for (std::uint32_t j = 0; j < i; ++j) repeated = repeated || m.events[j].id == e.id;
    const auto known = ids_.find(e.id);
    if (c.inherits) {
      // Ids its parent's threads were given, each for the same configured event.
      if (known == ids_.end() || known->second != e.config_index || repeated) {
        return refuse("id " + std::to_string(e.id) + " is not one its parent had");
      }
    } else if (e.id <= c.id_base || e.id >= c.id_base + kIdRange || known != ids_.end() ||
               repeated) {
      return refuse("id " + std::to_string(e.id) + " is outside its range or already used");
    }
  }
  std::vector<RingEvent> events;
  for (std::uint32_t i = 0; i < m.nr_events; ++i) {
    events.push_back(
        {m.events[i].id, config_.events[m.events[i].config_index].attr, m.events[i].config_index});
  }
  Expected<std::unique_ptr<ThreadRing>> mapped =
      ThreadRing::map(ring_fd, m.pid, m.tid, std::move(events));
  close(ring_fd);
  if (!mapped) {
    report_once(c, who + ": " + mapped.error().message);
    return true;
  }
  std::unique_ptr<ThreadRing> ring = std::move(*mapped);
  for (std::uint32_t i = 0; i < m.nr_events; ++i) {
    if (c.inherits) continue;  // listed under their attrs already
    ids_.emplace(m.events[i].id, m.events[i].config_index);
    writer_.add_ids(static_cast<int>(m.events[i].config_index), {&m.events[i].id, 1});
  }
  c.rings.emplace(m.tid, std::move(ring));
  ++stats_.threads;
  // The pokes its clocks take: a real-time signal, a period from the config (clock events turn a
  // frequency into the fixed period 1e9 / freq).
  ThreadClocks clocks{m.pid, m.tid, m.clock_signo, {}};
  for (std::uint32_t i = 0; i < m.nr_events; ++i) {
    const perf_event_attr& attr = config_.events[m.events[i].config_index].attr;
    const std::uint64_t period =
        attr.freq ? (attr.sample_freq != 0 ? 1'000'000'000 / attr.sample_freq : 0)
                  : attr.sample_period;
    if (m.events[i].clock != 0 && period != 0) clocks.clocks.push_back({m.events[i].clock, period});
  }
  if (!clocks.clocks.empty() && m.clock_signo >= SIGRTMIN && m.clock_signo <= SIGRTMAX) {
    c.clocks[m.tid] = std::move(clocks);
  }
  if (m.tid != m.pid) {
    const SyntheticStamp s = stamp(m.time);
    // A name its Comm gave it already (a thread may be announced late: at its first sample, or
    // at its end), else /proc's, else its process's.
    const auto named = c.comms.find(m.tid);
    std::string comm = named != c.comms.end() ? named->second : read_comm(m.pid, m.tid);
    if (comm.empty()) comm = read_comm(m.pid, m.pid);
    c.comms[m.tid] = comm;
    if (!write_task(PERF_RECORD_FORK, m.pid, m.pid, m.tid, m.ptid != 0 ? m.ptid : m.pid,
                    synthetic_attr(), s, writer_) ||
        !write_comm(m.pid, m.tid, comm, 0, synthetic_attr(), s, writer_)) {
      return !(failed_ = true);
    }
  }
  return true;
}

// Only a thread of the connection's process whose ThreadStart named its clocks.
void Recorder::on_busy_clock(Connection& c, const BusyClockMessage& m) {
  const auto it = c.clocks.find(m.tid);
  if (m.pid != c.pid || it == c.clocks.end()) {
    report_once(c, "process " + std::to_string(c.pid) + ": a BusyClock for thread " +
                       std::to_string(m.tid) + " ignored");
    return;
  }
  ticker_.busy(it->second);
}

// Only counts of this process's thread, for every configured event in config order, under the ids
// its ThreadStart (or its parent's) named.
void Recorder::on_event_counts(Connection& c, const EventCountsMessage& m) {
  bool ok = m.pid == c.pid && m.tid > 0 && m.nr_events == config_.events.size();
  for (std::uint32_t i = 0; ok && i < m.nr_events; ++i) {
    const auto known = ids_.find(m.events[i].id);
    ok = m.events[i].config_index == i && known != ids_.end() && known->second == i;
  }
  if (!ok) {
    report_once(c, "process " + std::to_string(c.pid) + ": EventCounts for thread " +
                       std::to_string(m.tid) + " ignored");
    return;
  }
  ThreadTotals& t = thread_totals_[{m.pid, m.tid, m.events[0].id}];
  t.counted = true;
  t.counts = m;
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

bool Recorder::on_thread_exit(Connection& c, const ThreadExitMessage& m) {
  if (m.pid != c.pid) return true;
  ticker_.forget_thread(m.pid, m.tid);
  if (auto it = c.rings.find(m.tid); it != c.rings.end()) {
    if (!drain_ring(c, *it->second)) return false;
    c.rings.erase(it);
  }
  c.clocks.erase(m.tid);
  c.comms.erase(m.tid);
  return write_exit(c, m.tid, m.time);
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
