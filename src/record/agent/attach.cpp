// `userperf record -p PID`: the recorder loads this library into a running process with ptrace
// (record/attach/: its own dlopen, called on a thread stopped at a safe point) and then calls the
// two entry points below there the same way. Loaded so, the library interposes nothing (the
// program's symbols were bound before it came, and dlopen(RTLD_LOCAL) puts it in no later lookup
// either): the agent records the threads it is given, and says nothing on the program's stderr.
#include <dirent.h>
#include <sys/resource.h>

#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "pmu/clock/clock_timer.hpp"
#include "pmu/clock/user_context.hpp"
#include "record/agent/session.hpp"
#include "record/agent/thread_events.hpp"
#include "record/protocol.hpp"
#include "support/descriptors.hpp"
#include "support/task_ids.hpp"

namespace userperf::record::agent {
namespace {

struct AttachedThread {
  pid_t tid = 0;
  std::uint64_t stack_low = 0;
  std::uint64_t stack_high = 0;
};

// "TID LOW HIGH" lines (decimal, hex, hex) as the recorder read each thread's stack; empty: every
// thread of /proc/self/task, stacks unknown (samples of threads but the main one carry no frames).
std::vector<AttachedThread> parse_threads(const char* text) {
  std::vector<AttachedThread> threads;
  if (text != nullptr && *text != '\0') {
    const char* p = text;
    while (*p != '\0') {
      char* end = nullptr;
      AttachedThread t;
      t.tid = static_cast<pid_t>(std::strtol(p, &end, 10));
      t.stack_low = std::strtoull(end, &end, 16);
      t.stack_high = std::strtoull(end, &end, 16);
      if (end == p || t.tid <= 0) break;
      threads.push_back(t);
      p = end;
      while (*p == '\n' || *p == ' ') ++p;
    }
    return threads;
  }
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return threads;
  while (const dirent* entry = readdir(dir)) {
    const long tid = std::strtol(entry->d_name, nullptr, 10);
    if (tid > 0) threads.push_back({static_cast<pid_t>(tid), 0, 0});
  }
  closedir(dir);
  return threads;
}

// Opens the events of each thread (its stack told first); the number recorded.
int start_threads(Session& session, const std::vector<AttachedThread>& threads) {
  int recorded = 0;
  for (const AttachedThread& t : threads) {
    pmu::note_thread_stack(t.tid, t.stack_low, t.stack_high);
    recorded += start_attached_thread(session, t.tid) ? 1 : 0;
    pmu::note_thread_stack(t.tid, 0, 0);
    if (!session.active.load()) break;
  }
  return recorded;
}

void first_attach() {
  // The agent's descriptors live high above the program's (descriptors.hpp), as when preloaded.
  if (support::descriptor_floor() == 0) {
    rlimit files{};
    if (getrlimit(RLIMIT_NOFILE, &files) == 0) {
      support::set_descriptor_floor(support::descriptor_floor_for(files.rlim_cur));
    }
  }
  init_thread_key();
  pmu::set_clock_sample_gate(may_sample);
}

}  // namespace
}  // namespace userperf::record::agent

using namespace userperf::record::agent;

// Starts recording this process: a session connected to `socket_path` with `config`
// (RecordConfig::encode), and the events of each of `threads`. Returns the number of threads
// recorded, or -EBUSY (this process is being recorded already), -EINVAL (a bad config),
// -ECONNREFUSED (the recorder did not welcome it), -ESRCH (no thread could be recorded).
extern "C" __attribute__((visibility("default"))) int userperf_agent_attach(const char* socket_path,
                                                                            const char* config_text,
                                                                            const char* threads) {
  if (current_session() != nullptr) return -EBUSY;
  if (socket_path == nullptr || config_text == nullptr) return -EINVAL;
  const userperf::Expected<userperf::record::RecordConfig> config =
      userperf::record::RecordConfig::decode(config_text);
  if (!config) return -EINVAL;
  static std::once_flag once;
  std::call_once(once, first_attach);
  int error = 0;
  Session* session = start_attached_session(socket_path, *config, &error);
  if (session == nullptr) return -error;
  const int recorded = start_threads(*session, parse_threads(threads));
  if (recorded == 0 || !session->active.load()) {
    end_attached_session(*session);
    return recorded == 0 ? -ESRCH : -ECONNREFUSED;
  }
  return recorded;
}

// Records more threads of this process (started since the attach): "TID LOW HIGH" lines as for
// userperf_agent_attach. The number recorded, or -ENOENT when no attached session runs.
extern "C" __attribute__((visibility("default"))) int userperf_agent_add_threads(
    const char* threads) {
  Session* session = current_session();
  if (session == nullptr || !session->attached || threads == nullptr || *threads == '\0') {
    return -ENOENT;
  }
  return start_threads(*session, parse_threads(threads));
}

// Stops recording this process: the counts are sent, every event is closed and the connection
// ends; the library stays loaded (inert). 0, or -ENOENT when no attached session runs.
extern "C" __attribute__((visibility("default"))) int userperf_agent_detach() {
  Session* session = current_session();
  if (session == nullptr || !session->attached) return -ENOENT;
  end_attached_session(*session);
  return 0;
}
