// `userperf record -p PID` / `-t TID`: recording a process userperf did not start. The agent
// library is loaded into it with ptrace, the way jattach and gdb's `call` do it: one thread is
// stopped at a safe point (not inside the C library or the dynamic loader, whose locks the call
// needs), made to call the process's own dlopen and then the agent's userperf_agent_attach, and put
// back exactly as it was (remote_call.hpp). The agent then opens the events of every thread it is
// given (the threads it has at the attach: record -p does not follow threads started later) and
// connects to the recorder as a preloaded agent does. Detaching calls userperf_agent_detach the
// same way: events closed, connection ended, the library left loaded and inert.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "support/expected.hpp"

namespace userperf::record {

struct AttachRequest {
  pid_t pid = 0;
  std::vector<pid_t> tids;  // -t: only these threads of pid; empty: every thread it has now
  std::string agent;        // libuserperf_agent.so, a real path
  std::string socket_path;  // the recorder's socket
  std::string config;       // RecordConfig::encode()
};

// The process a thread id belongs to (its Tgid), or ESRCH.
Expected<pid_t> process_of_thread(pid_t tid);
// The threads of process `pid` now (/proc/PID/task); empty when it is gone.
std::vector<pid_t> process_threads(pid_t pid);
// Its effective user and group (/proc/PID/status); false when it is gone.
bool process_owner(pid_t pid, uid_t& uid, gid_t& gid);

struct AttachResult {
  int recorded = 0;         // threads whose events the agent opened
  std::vector<pid_t> tids;  // the threads it was given
};

// Loads the agent into request.pid and starts its recording; the number of threads recorded. The
// errors say what to do: EPERM (another user, kernel.yama.ptrace_scope, a non-dumpable or already
// traced process), ENOEXEC (statically linked), ENOSYS (no dlopen in its C library), EBUSY (being
// recorded already), ESRCH (gone, or exec'd meanwhile), EAGAIN (stopped, or no safe point found).
// A failed attach leaves the process as it was (the agent may stay loaded, inert).
Expected<AttachResult> attach_process(const AttachRequest& request);

// Records threads an attached process started since (record -p looks for them every 100 ms): the
// number the agent recorded; 0 when none (gone meanwhile, or the agent is not there any more).
Expected<int> add_threads(pid_t pid, const std::vector<pid_t>& tids);

// Ends the recording of an attached process: true. False when the agent is not there any more
// (the process is gone, or exec'd: its recording ended with that image).
Expected<bool> detach_process(pid_t pid);

}  // namespace userperf::record
