// What each message of an agent does to the recorder's state and to the file: Hello (the process's
// COMM, FORK and MMAP2s, read from /proc while it waits for its Welcome, or taken from its parent),
// ThreadStart (the ring mapped once every id in it is checked), Comm, Tracepoint, ExecNotice,
// BusyClock, EventCounts, ThreadExit and ProcessExit. A message that breaks the protocol is said
// once and ends its connection or is ignored; it never reaches the file.
#include <signal.h>
#include <unistd.h>

#include <cstring>

#include "record/recorder/connection.hpp"
#include "record/recorder/recorder.hpp"
#include "record/transport.hpp"

namespace userperf::record {

namespace {

// How often each live process's /proc/PID/maps is read again for objects it loaded (dlopen).
constexpr std::uint64_t kMapsRescanNs = 100'000'000;

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

}  // namespace userperf::record
