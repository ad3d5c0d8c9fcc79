// The agent's connection to the recorder: one per process image (and per fork child), opened from
// USERPERF_RECORD_SOCKET / USERPERF_RECORD_CONFIG (protocol.hpp). A session that fails to send goes
// idle for good: its events are closed and the program runs on unrecorded.
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
  std::string socket_path;
  RecordConfig config;
  int socket = -1;
  pid_t pid = 0;
  int ring_owner = 0;  // index of the event whose mapping is the thread's ring
  int bpf_prog = -1;   // --bpf program descriptor, -1: none
  // A fork child's: the ids of its forking thread's events (config order), which every thread of
  // this process gives its own events (Engine::inherit_id); empty when the recorder gave ids.
  std::vector<std::uint64_t> inherited_ids;
  std::atomic<bool> active{false};
  std::atomic<bool> stopped{false};  // go_idle ran
};

// The active session of this process, nullptr when idle.
Session* current_session();

// From the environment: nullptr (idle) when the variables are absent, the config is bad (one
// stderr line says why) or the recorder refuses or does not answer.
Session* start_session_from_env();

// In a fork child: the inherited session stops being this process's (its socket copy is closed,
// so the recorder sees the parent's connection end when the parent's does). Returns it when it
// was active, for start_child_session.
Session* leave_parent_session_in_child();

// In a fork child: a new connection with the parent's config (Hello names the forking thread).
// With the forking thread's event ids (config order) the child's events take them and Hello waits
// for no answer; without (the thread was not recorded), the recorder gives ids as to an image.
Session* start_child_session(const Session& parent, pid_t parent_tid,
                             std::vector<std::uint64_t> inherited_ids);

// One message as one datagram. False when the session is idle or the send failed; a failure
// makes the session idle (see go_idle) unless a ScopedEngineCallback is alive on this thread.
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

// A recorded thread was renamed: Comm to the recorder (no-op when idle or tid is 0).
void announce_comm(pid_t tid, const char* name);

}  // namespace userperf::record::agent
