// The agent's connection to the recorder: one per process image (and per fork child), from
// USERPERF_RECORD_SOCKET / USERPERF_RECORD_CONFIG (protocol.hpp). A session that fails to send goes
// idle for good: its events are closed and the program runs on unrecorded.
//
// The recorder hears of a process at its first sample, not at its start (docs/record.md,
// "Starting processes"): the agent sets up the events and rings of every thread when it starts,
// and says Hello (and each thread's ThreadStart) from the clock handler of the first sample, so a
// process that ends before its first sample - a shell's fork child on its way to exec, a short
// command - costs the recorder nothing, as an unsampled process costs kernel perf nothing. A
// config with tracepoints or an AUX area, whose records do not wait for a clock, says Hello at
// once.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "record/protocol.hpp"
#include "support/monotonic_clock.hpp"

namespace userperf::record::agent {

struct Session {
  // Where Hello stands: not said yet, being said (by one thread: its first sample), said.
  enum State : int { kQuiet, kSaying, kHeard };

  std::string socket_path;
  RecordConfig config;
  int socket = -1;  // once heard
  pid_t pid = 0;
  pid_t parent_tid = 0;        // a fork child's forking thread, for Hello
  std::uint64_t start_ns = 0;  // CLOCK_MONOTONIC when this image (or fork child) began
  bool eager = false;          // says Hello at once (tracepoints, AUX, attached)
  // Loaded into a running process by `userperf record -p` (attach.cpp): its threads were started
  // without the agent, and nothing of the agent is said on the program's stderr.
  bool attached = false;
  int ring_owner = 0;  // index of the event whose mapping is the thread's ring
  int bpf_prog = -1;   // --bpf program descriptor, -1: none
  // A fork child whose forking thread the recorder had heard of: its events carry that thread's
  // ids, and Hello waits for no Welcome. inherited_ids (config order) are what threads it starts
  // give their events (Engine::inherit_id); the forking thread's own events carry them already.
  bool inherits = false;
  std::vector<std::uint64_t> inherited_ids;
  std::atomic<std::uint64_t> id_base{0};  // from the Welcome
  std::atomic<int> state{kQuiet};
  std::atomic<bool> active{false};
  std::atomic<bool> stopped{false};  // go_idle ran
};

// The active session of this process, nullptr when idle.
Session* current_session();

// Whether the recorder has heard from this process, saying Hello now if not (connect, Hello, and
// for a process that does not inherit its ids the Welcome's id base). SIGNAL-SAFE: a thread's
// first sample calls it from the clock handler. False while another thread is saying it, and when
// it failed (the session is then inactive).
bool say_hello(Session& session);
bool heard(const Session& session);

// From the environment: nullptr (idle) when the variables are absent, the config is bad (one
// stderr line says why) or the recorder refuses or does not answer.
Session* start_session_from_env();

// A session for an agent loaded into a running process (attach.cpp): eager (Hello now), quiet.
// nullptr when the config is bad or the recorder refuses; *error is then a positive errno.
Session* start_attached_session(const std::string& socket_path, const RecordConfig& config,
                                int* error);
// Ends it (detach): every thread's counts are sent, their events closed, the connection shut
// down, and the process has no session any more (a later attach starts a new one).
void end_attached_session(Session& session);

// In a fork child: the inherited session stops being this process's (its socket copy is closed,
// so the recorder sees the parent's connection end when the parent's does). Returns it when it
// was active, for start_child_session.
Session* leave_parent_session_in_child();

// In a fork child: a new connection with the parent's config (Hello names the forking thread).
// With the forking thread's event ids (config order) the child's events take them and Hello waits
// for no answer; without (the thread was not recorded), the recorder gives ids as to an image.
Session* start_child_session(const Session& parent, pid_t parent_tid,
                             std::vector<std::uint64_t> inherited_ids);
// In a lazy session's fork child, when its clocks follow its thread (SIGNAL-SAFE): the session in
// its copy of the parent's memory becomes the child's - not heard yet, this pid, the parent's
// connection let go - with nothing else set up again (ticker, --bpf program and config are the
// parent's copies). `inherits`: the forking thread's ids were final.
void adopt_forked_session(Session& session, pid_t parent_tid, bool inherits);
// The session object as the fork left it (a lazy session's child that has not adopted it yet).
Session* inherited_session();
// A lazy session's fork child (agent.cpp) about to use the engine - it starts a thread: its
// clocks follow its thread, and new threads get an engine of their own.
void take_over_in_child();
// A lazy session's fork child that has to speak to the recorder (an exec of a program the agent
// cannot enter is named): its clocks follow its thread now, so the session is its own.
void settle_fork_child();

// One message as one datagram. False when the session is idle, not heard yet, or the send failed;
// a failure makes the session idle (see go_idle) unless a ScopedEngineCallback is alive on this
// thread.
bool send(Session& session, const void* message, std::size_t size, const int* fds = nullptr,
          int nfds = 0);

// Marks the session idle, shuts its socket down and closes every thread's events (once).
void go_idle(Session& session);

// Inside a callback the engine makes (its lock may be held): a failed send only marks the
// session idle; the caller of the engine finishes the job with go_idle after the engine returns.
class ScopedEngineCallback {
 public:
  ScopedEngineCallback();
  ~ScopedEngineCallback();
  ScopedEngineCallback(const ScopedEngineCallback&) = delete;
  ScopedEngineCallback& operator=(const ScopedEngineCallback&) = delete;
};

using support::monotonic_ns;
pid_t current_thread_id();

// One line on stderr ("userperf agent: ..."): how the agent tells the user why it does not record.
__attribute__((format(printf, 1, 2))) void say(const char* format, ...);
// The same from a signal handler (no stdio there): a fixed text.
void say_from_handler(const char* what);

// An exec's notice (ExecNoticeMessage; message.pid is the caller's), whatever state this process is
// in: one the recorder heard of sends it on its connection, and says Hello first when the program
// must be named (`must_name`: one the agent cannot enter); a lazy fork child settles first (its
// session becomes its own), and only then: one whose program needs no name stays untouched. A
// vfork child runs on its parent's memory, which it never writes: it
// sends on the parent's connection when the recorder heard of the parent, and otherwise, when the
// program must be named, on a connection of its own for the moment (Hello, notice). Quiet
// processes say nothing of programs the agent enters. True when sent. Async-signal-safe but for
// settling (a vfork child does not settle).
bool send_exec_notice(Session& session, const ExecNoticeMessage& message, bool must_name);

// A recorded thread was renamed: Comm to the recorder (no-op when idle or tid is 0).
void announce_comm(pid_t tid, const char* name);

}  // namespace userperf::record::agent
