// `userperf record -p PID[,PID...]` / `-t TID[,TID...]`: records running processes, the agent
// loaded into each with ptrace (src/record/attach), until ^C, until COMMAND (perf's `-- sleep N`)
// ends, or until every one of them has ended; then each is detached.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "pmu/clock/clock_ticker.hpp"
#include "record.hpp"
#include "record/attach/attach.hpp"
#include "record/recorder/process_state.hpp"
#include "support/monotonic_clock.hpp"

namespace userperf::cli {
namespace {

// How often an attached process's threads are listed for ones it started since.
constexpr std::uint64_t kThreadScanNs = 100'000'000;

template <class Targets>
Expected<void> give_socket_to_targets(const Targets& targets, record::SocketDir& dir) {
  // Only root may attach to another user's process, and give it anything.
  if (geteuid() != 0) return {};
  bool other = false;
  uid_t owner_uid = geteuid();
  gid_t owner_gid = getegid();
  for (const auto& t : targets) {
    uid_t uid = 0;
    gid_t gid = 0;
    if (!record::process_owner(t.pid, uid, gid) || uid == geteuid()) continue;
    if (other && uid != owner_uid) {
      return make_error(EPERM, "processes " + std::to_string(targets.front().pid) + " and " +
                                   std::to_string(t.pid) +
                                   " belong to different users: record them one user at a time");
    }
    other = true;
    owner_uid = uid;
    owner_gid = gid;
  }
  if (!other) return {};
  return dir.give_to(owner_uid, owner_gid);
}

}  // namespace

// perf record -p/-t: the processes' threads are recorded from the attach until ^C, until
// COMMAND (when given: perf's `-- sleep N`) ends, or until every attached process has ended; then
// each process still running is detached (record/attach/attach.hpp).
int run_attach(const RecordOptions& options, const std::vector<std::string>& command) {
  // What lives in the program only when the agent was there from its start.
  if (options.off_cpu) {
    return fail(
        "--off-cpu wraps the program's blocking calls, which only an agent preloaded at "
        "its start can do: not available with -p/-t (record the program from its start)");
  }
  if (!options.aux.empty()) {
    return fail(
        "--aux sources write from hooks the program binds at its start: not available "
        "with -p/-t (record the program from its start)");
  }
  struct Target {
    pid_t pid = 0;
    std::vector<pid_t> tids;  // empty: every thread
    std::uint64_t start_time = 0;
    bool attached = false;
    std::set<pid_t> known;  // its threads seen so far: recorded, or not to be (the ticker)
  };
  std::vector<Target> targets;
  auto target_of = [&](pid_t pid) -> Target& {
    for (Target& t : targets) {
      if (t.pid == pid) return t;
    }
    targets.push_back(Target{pid, {}, 0, false, {}});
    return targets.back();
  };
  for (const pid_t pid : options.pids) target_of(pid);
  for (const pid_t tid : options.tids) {
    Expected<pid_t> pid = record::process_of_thread(tid);
    if (!pid) return fail(pid.error().message);
    const bool whole =
        std::find(options.pids.begin(), options.pids.end(), *pid) != options.pids.end();
    if (!whole) target_of(*pid).tids.push_back(tid);
  }
  Expected<RecordSetup> prepared = prepare(options);
  if (!prepared) return fail(prepared.error().message);
  const record::RecordConfig& config = prepared->config;
  for (const record::EventConfig& e : config.events) {
    if (e.attr.type == PERF_TYPE_TRACEPOINT) {
      return fail(e.name +
                  ": tracepoints bind when the program starts: not available with -p/-t "
                  "(record the program from its start)");
    }
  }
  // The agents run as their processes' user: root recording another user's processes gives them
  // the socket's directory (one user's processes per recording, so that no one else reaches it).
  if (Expected<void> owned = give_socket_to_targets(targets, *prepared->socket_dir); !owned) {
    return fail(owned.error().message);
  }
  // Its own ticker thread pokes its clocks (recorder.cpp's Connection::attached says why).
  prepared->config.ticker_pid = 0;
  const std::string config_text = config.encode();
  catch_stop_signals();
  signal(SIGPIPE, SIG_IGN);
  keep_old_output(options.output);
  auto created = perfdata::Writer::create(options.output);
  if (!created) return fail(created.error().message);
  std::unique_ptr<perfdata::Writer> writer = std::move(*created);
  record::Recorder recorder(prepared->socket_dir->listen_fd(), config, *writer, stderr);
  if (!recorder.begin()) return fail(writer->error().message);

  // ptrace belongs to the thread that attached: each round of attaches (and of detaches) runs on
  // a thread of its own while this one serves the agents' connections (their Hello waits for it).
  std::thread worker;
  std::atomic<bool> worker_done{false};
  std::vector<std::string> errors;  // the worker's, read after it is joined
  auto attach_all = [&] {
    for (Target& t : targets) {
      t.start_time = record::read_start_time(t.pid);
      record::AttachRequest request;
      request.pid = t.pid;
      request.tids = t.tids;
      request.agent = prepared->agent;
      request.socket_path = prepared->socket_dir->socket_path();
      request.config = config_text;
      Expected<record::AttachResult> result = record::attach_process(request);
      if (!result) {
        errors.push_back(result.error().message);
        continue;
      }
      t.attached = true;
      t.known.insert(result->tids.begin(), result->tids.end());
    }
    worker_done = true;
  };
  // Threads a process started since the last look (perf -p's inherit): recorded too, every
  // kThreadScanNs. Only for whole processes (-p): -t names its threads.
  auto follow_new_threads = [&] {
    for (Target& t : targets) {
      if (!t.attached || !t.tids.empty()) continue;
      std::vector<pid_t> fresh;
      for (const pid_t tid : record::process_threads(t.pid)) {
        if (!t.known.insert(tid).second) continue;
        if (record::read_comm(t.pid, tid) != pmu::kTickerThreadName) fresh.push_back(tid);
      }
      if (fresh.empty()) continue;
      if (Expected<int> added = record::add_threads(t.pid, fresh); !added) {
        errors.push_back(added.error().message);
      }
    }
    worker_done = true;
  };
  auto detach_all = [&] {
    for (const Target& t : targets) {
      if (!t.attached || !record::process_running(t.pid, t.start_time)) continue;
      Expected<bool> detached = record::detach_process(t.pid);
      if (!detached) {
        errors.push_back(detached.error().message);
      } else if (!*detached && record::process_running(t.pid, t.start_time)) {
        errors.push_back("process " + std::to_string(t.pid) +
                         " ran a new program (exec) during the recording: it was recorded until "
                         "then");
      }
    }
    worker_done = true;
  };
  auto say_errors = [&] {
    for (const std::string& e : errors) std::fprintf(stderr, "userperf record: %s\n", e.c_str());
    errors.clear();
  };
  enum class Phase { kAttaching, kRecording, kDetaching } phase = Phase::kAttaching;
  pid_t child = -1;
  bool any_attached = false;
  std::uint64_t last_scan = support::monotonic_ns();
  auto start_detaching = [&] {
    if (child > 0) {
      kill(child, SIGTERM);
      stop_child(child);
      child = -1;
    }
    worker_done = false;
    worker = std::thread(detach_all);
    phase = Phase::kDetaching;
  };
  worker = std::thread(attach_all);
  auto done = [&] {
    switch (phase) {
      case Phase::kAttaching: {
        if (!worker_done) return false;
        worker.join();
        say_errors();
        for (const Target& t : targets) any_attached = any_attached || t.attached;
        if (!any_attached) return true;
        phase = Phase::kRecording;
        if (!command.empty()) {
          // The command only times the recording: it runs as is, without the agent.
          std::vector<char*> argv;
          for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
          argv.push_back(nullptr);
          if (posix_spawnp(&child, argv[0], nullptr, nullptr, argv.data(), environ) != 0) {
            std::fprintf(stderr, "userperf record: cannot run '%s'\n", argv[0]);
            child = -1;
            start_detaching();
          }
        }
        return false;
      }
      case Phase::kRecording: {
        bool stop = g_stop_requested != 0;
        int status = 0;
        if (child > 0 && waitpid(child, &status, WNOHANG) == child) {
          child = -1;
          stop = true;
        }
        bool running = false;
        for (const Target& t : targets) {
          running = running || (t.attached && record::process_running(t.pid, t.start_time));
        }
        // A look for new threads in flight finishes first (ptrace is its thread's).
        if (worker.joinable() && worker_done) {
          worker.join();
          say_errors();
        }
        if (stop || !running) {
          if (worker.joinable()) return false;
          start_detaching();
          return false;
        }
        const std::uint64_t now = support::monotonic_ns();
        if (!worker.joinable() && now - last_scan >= kThreadScanNs) {
          last_scan = now;
          worker_done = false;
          worker = std::thread(follow_new_threads);
        }
        return false;
      }
      case Phase::kDetaching:
        if (!worker_done) return false;
        worker.join();
        say_errors();
        return true;
    }
    return true;
  };
  bool progress_shown = false;
  const auto progress = progress_line(options, *writer, &progress_shown);
  const bool ran = recorder.run_until(done, progress);
  if (!ran) {
    // The file failed: the processes are detached all the same.
    if (phase == Phase::kRecording) {
      if (worker.joinable()) worker.join();
      start_detaching();
    }
    if (worker.joinable()) worker.join();
    if (phase == Phase::kAttaching) {
      worker_done = false;
      detach_all();
    }
    say_errors();
  }
  clear_progress_line(progress_shown);
  if (!any_attached) return 255;
  if (!ran || !recorder.finish()) {
    std::fprintf(stderr, "userperf record: %s is incomplete (%s)\n", options.output.c_str(),
                 writer->failed() ? writer->error().message.c_str() : "recording failed");
    return 255;
  }
  summarize(options, recorder, config);
  return 0;
}

}  // namespace userperf::cli
