#include "record/attach/attach.hpp"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>

#include "record/attach/elf_symbols.hpp"
#include "record/attach/remote_call.hpp"

namespace userperf::record {
namespace {

// How long a safe point is looked for, and how long the thread runs between two looks.
constexpr int kSafePointTries = 400;
constexpr unsigned kSafePointRunUs = 5000;
// How long a process still in its dynamic loader is given to load its C library.
constexpr int kStartingTries = 20;
constexpr unsigned kStartingWaitUs = 10000;

struct Range {
  std::uint64_t start = 0, end = 0;
  bool contains(std::uint64_t address) const { return address >= start && address < end; }
};

bool file_name_starts(const std::string& path, const char* prefix) {
  const std::string file = path.substr(path.rfind('/') + 1);
  return file.rfind(prefix, 0) == 0;
}

// A line "Key:\tvalue" of /proc/PID/status, "" when absent.
std::string status_field(pid_t pid, const std::string& key) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(key + ":", 0) != 0) continue;
    std::size_t at = key.size() + 1;
    while (at < line.size() && (line[at] == '\t' || line[at] == ' ')) ++at;
    return line.substr(at);
  }
  return {};
}

std::vector<pid_t> threads_of(pid_t pid) {
  std::vector<pid_t> tids;
  DIR* dir = opendir(("/proc/" + std::to_string(pid) + "/task").c_str());
  if (dir == nullptr) return tids;
  while (const dirent* entry = readdir(dir)) {
    const long tid = std::strtol(entry->d_name, nullptr, 10);
    if (tid > 0) tids.push_back(static_cast<pid_t>(tid));
  }
  closedir(dir);
  return tids;
}

bool is_zombie_thread(pid_t pid, pid_t tid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/stat");
  std::string text;
  std::getline(stat, text);
  const std::size_t close = text.rfind(')');
  return close == std::string::npos || close + 2 >= text.size() || text[close + 2] == 'Z';
}

// Why ptrace refused, and what to do about it.
Error permission_error(pid_t pid, const Error& refused) {
  std::string why;
  uid_t owner = 0;
  gid_t group = 0;
  const bool known = process_owner(pid, owner, group);
  const std::string tracer = status_field(pid, "TracerPid");
  std::ifstream scope_file("/proc/sys/kernel/yama/ptrace_scope");
  int scope = -1;
  if (!(scope_file >> scope)) scope = -1;
  if (known && owner != geteuid() && geteuid() != 0) {
    why = "it belongs to user " + std::to_string(owner) +
          "; run userperf record as that user, or as root (CAP_SYS_PTRACE)";
  } else if (!tracer.empty() && tracer != "0") {
    why = "it is being traced already by process " + tracer +
          " (a debugger, strace, or another userperf record -p)";
  } else if (scope == 3) {
    why = "kernel.yama.ptrace_scope is 3: ptrace is disabled until the next reboot";
  } else if (scope == 2 && geteuid() != 0) {
    why =
        "kernel.yama.ptrace_scope is 2: only a process with CAP_SYS_PTRACE may attach; run "
        "userperf record as root";
  } else if (scope == 1 && geteuid() != 0) {
    why =
        "kernel.yama.ptrace_scope is 1: only a parent may trace its children; run userperf "
        "record as root, or set `sysctl kernel.yama.ptrace_scope=0`";
  } else {
    why =
        "the process is not dumpable (a set-user-ID program, or prctl(PR_SET_DUMPABLE, 0)); "
        "run userperf record as root (CAP_SYS_PTRACE)";
  }
  return make_error(EPERM, "cannot attach to process " + std::to_string(pid) + " (" +
                               refused.message + "): " + why);
}

Error with_pid(pid_t pid, const Error& e) {
  return make_error(e.code, "process " + std::to_string(pid) + ": " + e.message);
}

// Stops `tid`, mapping a ptrace refusal to what to do.
Expected<std::unique_ptr<RemoteThread>> stop_thread(pid_t pid, pid_t tid) {
  Expected<std::unique_ptr<RemoteThread>> thread = RemoteThread::stop(pid, tid);
  if (!thread && thread.error().code == EPERM) return permission_error(pid, thread.error());
  return thread;
}

// The executable mappings of the dynamic loader and of the C library.
struct RuntimeText {
  std::vector<Range> loader;
  std::vector<Range> libc;
};

RuntimeText runtime_text(const std::vector<ProcessMapping>& maps) {
  RuntimeText text;
  for (const ProcessMapping& m : maps) {
    if (m.executable && file_name_starts(m.path, "ld-linux"))
      text.loader.push_back({m.start, m.end});
    if (m.executable && file_name_starts(m.path, "libc.so")) text.libc.push_back({m.start, m.end});
  }
  return text;
}

// Whether a thread stopped here may call into the C library and the loader: not while it runs
// their code (it may hold malloc's or the loader's lock, which the call needs too), nor inside the
// system calls malloc makes with its lock held.
bool at_safe_point(const user_regs_struct& regs, const RuntimeText& text) {
  const auto inside = [&](const std::vector<Range>& ranges) {
    for (const Range& r : ranges) {
      if (r.contains(regs.rip)) return true;
    }
    return false;
  };
  const auto syscall_nr = static_cast<long long>(regs.orig_rax);
  if (syscall_nr >= 0) {
    switch (syscall_nr) {
      case SYS_mmap:
      case SYS_munmap:
      case SYS_brk:
      case SYS_mprotect:
      case SYS_mremap:
      case SYS_madvise:
        return false;
      default:
        // A blocking call of the program's (a read, a sleep, a futex wait): its caller holds none
        // of the runtime's locks, unless it is the loader itself.
        return !inside(text.loader);
    }
  }
  return !inside(text.loader) && !inside(text.libc);
}

struct Target {
  std::uint64_t dlopen = 0;
  std::uint64_t dlerror = 0;
  RuntimeText text;
};

Expected<Target> find_target(pid_t pid) {
  const std::string maps_path = "/proc/" + std::to_string(pid) + "/maps";
  const int fd = open(maps_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return make_error(ESRCH, "no process " + std::to_string(pid));
    return permission_error(
        pid, make_error(err, "cannot read " + maps_path + ": " + std::strerror(err)));
  }
  close(fd);
  const std::vector<ProcessMapping> maps = read_process_maps(pid);
  // A process that has exited (a zombie) has no address space left.
  if (maps.empty()) return make_error(ESRCH, "process " + std::to_string(pid) + " has exited");
  Target target;
  target.text = runtime_text(maps);
  if (target.text.loader.empty()) {
    return make_error(ENOEXEC,
                      "process " + std::to_string(pid) +
                          " is statically linked (it has no dynamic loader): userperf cannot load "
                          "its agent into it. Record it with kernel perf record -p where "
                          "perf_event_open is allowed.");
  }
  if (target.text.libc.empty()) {
    return make_error(EAGAIN, "process " + std::to_string(pid) +
                                  " is starting (its dynamic loader has not loaded the C library "
                                  "yet); try again");
  }
  // glibc 2.34 and later have dlopen in libc.so.6; older ones in libdl.so.2, when it is loaded.
  for (const char* prefix : {"libc.so", "libdl.so"}) {
    for (const LoadedObject& object : loaded_objects(pid, prefix)) {
      Expected<std::uint64_t> open = remote_function(pid, object, "dlopen");
      Expected<std::uint64_t> error = remote_function(pid, object, "dlerror");
      if (!open) return with_pid(pid, open.error());
      if (*open != 0 && error && *error != 0) {
        target.dlopen = *open;
        target.dlerror = *error;
        return target;
      }
    }
  }
  return make_error(ENOSYS, "process " + std::to_string(pid) +
                                " has no dlopen in its C library (glibc 2.34 or later has it, "
                                "older glibc only with libdl.so.2 loaded; musl cannot load the "
                                "agent): userperf cannot load its agent into it");
}

// What program the process runs: its executable and the C library's address, which an exec
// changes (the pid and start time stay).
std::string image_of(pid_t pid) {
  char exe[4096];
  const ssize_t n = readlink(("/proc/" + std::to_string(pid) + "/exe").c_str(), exe, sizeof exe);
  std::string image = n > 0 ? std::string(exe, static_cast<std::size_t>(n)) : std::string();
  for (const LoadedObject& libc : loaded_objects(pid, "libc.so")) {
    image += " " + std::to_string(libc.base);
  }
  return image;
}

// A call that failed: when the process ran a new program meanwhile, the addresses were the old
// image's, and that is what is said.
Error call_failed(pid_t pid, const std::string& image, const Error& error) {
  if (error.code == ESRCH) return error;
  if (image_of(pid) != image) {
    return make_error(ESRCH, "process " + std::to_string(pid) +
                                 " ran a new program (exec) during the attach: nothing was "
                                 "loaded, it runs on unchanged; attach again to record the new "
                                 "program");
  }
  return with_pid(pid, error);
}

// [low, high) of the mapping holding `sp`, as the clock's frame walk needs them.
Range stack_of(const std::vector<ProcessMapping>& maps, std::uint64_t sp) {
  for (const ProcessMapping& m : maps) {
    if (m.contains(sp)) return {m.start, m.end};
  }
  return {};
}

// "TID LOW HIGH" lines for the agent: each thread's stack, from its stack pointer (stopped a
// moment, one at a time); the clock's frame walk reads only inside it. The main thread's the agent
// knows itself. A thread gone meanwhile is left out.
Expected<std::string> thread_stacks(pid_t pid, const std::vector<pid_t>& tids) {
  std::string threads;
  const std::vector<ProcessMapping> maps = read_process_maps(pid);
  for (const pid_t tid : tids) {
    Range stack;
    if (tid != pid) {
      Expected<std::unique_ptr<RemoteThread>> stopped = stop_thread(pid, tid);
      if (!stopped && stopped.error().code != ESRCH) return stopped.error();
      if (!stopped) continue;
      stack = stack_of(maps, (*stopped)->regs().rsp);
    }
    char line[64];
    std::snprintf(line, sizeof line, "%d %" PRIx64 " %" PRIx64 "\n", tid, stack.start, stack.end);
    threads += line;
  }
  return threads;
}

// The agent's function `name` in process pid, 0 when the agent is not loaded there.
Expected<std::uint64_t> agent_function(pid_t pid, const char* name) {
  for (const LoadedObject& object : loaded_objects(pid, "libuserperf_agent")) {
    return remote_function(pid, object, name);
  }
  return std::uint64_t{0};
}

// A thread that can make calls: the main one unless it has ended (pthread_exit), then another.
Expected<std::unique_ptr<RemoteThread>> stop_caller(pid_t pid, const RuntimeText& text) {
  pid_t caller = pid;
  if (is_zombie_thread(pid, pid)) {
    caller = 0;
    for (const pid_t tid : threads_of(pid)) {
      if (tid != pid && !is_zombie_thread(pid, tid)) caller = tid;
    }
    if (caller == 0) {
      return make_error(ESRCH, "process " + std::to_string(pid) +
                                   " is exiting (or replacing its threads to run a new program)");
    }
  }
  Expected<std::unique_ptr<RemoteThread>> thread = stop_thread(pid, caller);
  if (!thread) return thread;
  for (int i = 0; i < kSafePointTries; ++i) {
    if (at_safe_point((*thread)->regs(), text)) return thread;
    if (Expected<void> ran = (*thread)->run_for(kSafePointRunUs); !ran) return ran.error();
  }
  return make_error(EAGAIN, "thread " + std::to_string(caller) + " of process " +
                                std::to_string(pid) +
                                " stayed inside the C library or the dynamic loader for 2 s: no "
                                "safe point to load the agent at; try again");
}

// Calls the agent's `name` in process pid on a thread stopped at a safe point: its result, or
// false in `*present` when the agent is not there (the process is gone or exec'd).
Expected<std::int64_t> call_agent(pid_t pid, const char* name,
                                  const std::vector<RemoteArgument>& args, bool* present) {
  *present = false;
  Expected<std::uint64_t> entry = agent_function(pid, name);
  if (!entry) return with_pid(pid, entry.error());
  if (*entry == 0) return std::int64_t{0};
  Expected<std::unique_ptr<RemoteThread>> caller =
      stop_caller(pid, runtime_text(read_process_maps(pid)));
  if (!caller) return caller.error().code == ESRCH ? Expected<std::int64_t>(0) : caller.error();
  Expected<std::uint64_t> result = (*caller)->call(*entry, args);
  if (!result) {
    return result.error().code == ESRCH ? Expected<std::int64_t>(0) : with_pid(pid, result.error());
  }
  *present = true;
  return static_cast<std::int64_t>(*result);
}

std::string attach_refusal(int code) {
  switch (code) {
    case EBUSY:
      return "it is being recorded already (another userperf record, or started by one)";
    case EINVAL:
      return "the agent refused the configuration (a userperf of another version?)";
    case ECONNREFUSED:
      return "the agent could not connect to this recorder";
    case ESRCH:
      return "none of its threads could be recorded";
    default:
      return std::strerror(code);
  }
}

}  // namespace

Expected<pid_t> process_of_thread(pid_t tid) {
  // /proc/TID is reachable for any thread id, and its Tgid names the process.
  const std::string tgid = status_field(tid, "Tgid");
  if (tgid.empty()) return make_error(ESRCH, "no thread " + std::to_string(tid));
  return static_cast<pid_t>(std::strtol(tgid.c_str(), nullptr, 10));
}

std::vector<pid_t> process_threads(pid_t pid) {
  return threads_of(pid);
}

bool process_owner(pid_t pid, uid_t& uid, gid_t& gid) {
  unsigned real = 0;
  unsigned effective = 0;
  if (std::sscanf(status_field(pid, "Uid").c_str(), "%u %u", &real, &effective) != 2) return false;
  uid = effective;
  if (std::sscanf(status_field(pid, "Gid").c_str(), "%u %u", &real, &effective) != 2) return false;
  gid = effective;
  return true;
}

Expected<AttachResult> attach_process(const AttachRequest& request) {
  const pid_t pid = request.pid;
  if (pid == getpid()) return make_error(EINVAL, "userperf record cannot attach to itself");
  // The addresses are read against one image, taken before them: an exec from here on shows as
  // another image. A lookup an exec overtook (the old C library gone, the new program still in
  // its loader) is no verdict on the new program, and a process still in its loader (just
  // started, or just exec'd) gets a moment to finish: both look again.
  std::string image;
  Expected<Target> target = make_error(EAGAIN, "");
  for (int i = 0; i <= kStartingTries; ++i) {
    if (i > 0) usleep(kStartingWaitUs);
    image = image_of(pid);
    target = find_target(pid);
    const bool overtaken = image_of(pid) != image;
    if (target && !overtaken) break;
    if (!target && !overtaken && target.error().code != EAGAIN) break;
    if (target)
      target = make_error(
          EAGAIN,
          "process " + std::to_string(pid) +
              " kept running new programs (exec) while userperf read its addresses; try again");
  }
  if (!target) return target.error();
  std::vector<pid_t> tids = request.tids;
  const std::vector<pid_t> all = threads_of(pid);
  if (tids.empty()) tids = all;
  for (const pid_t tid : tids) {
    bool found = false;
    for (const pid_t t : all) found = found || t == tid;
    if (!found) {
      return make_error(ESRCH, "thread " + std::to_string(tid) + " is not a thread of process " +
                                   std::to_string(pid));
    }
  }
  Expected<std::string> threads = thread_stacks(pid, tids);
  if (!threads) return threads.error();

  Expected<std::unique_ptr<RemoteThread>> caller = stop_caller(pid, target->text);
  if (!caller) return caller.error();
  RemoteThread& thread = **caller;
  Expected<std::uint64_t> handle = thread.call(
      target->dlopen, {request.agent, static_cast<std::uint64_t>(RTLD_NOW | RTLD_LOCAL)});
  if (!handle) return call_failed(pid, image, handle.error());
  if (*handle == 0) {
    Expected<std::uint64_t> text = thread.call(target->dlerror, {});
    const std::string why = text && *text != 0 ? thread.read_string(*text) : "dlopen failed";
    return make_error(ELIBACC, "process " + std::to_string(pid) + " could not load " +
                                   request.agent + ": " + why);
  }
  Expected<std::uint64_t> entry = agent_function(pid, "userperf_agent_attach");
  if (!entry) return with_pid(pid, entry.error());
  if (*entry == 0) {
    return make_error(ELIBACC, "process " + std::to_string(pid) + ": " + request.agent +
                                   " has no userperf_agent_attach (an agent of another version?)");
  }
  Expected<std::uint64_t> result =
      thread.call(*entry, {request.socket_path, request.config, *threads});
  if (!result) return call_failed(pid, image, result.error());
  const auto recorded = static_cast<int>(static_cast<std::int64_t>(*result));
  if (recorded <= 0) {
    return make_error(-recorded, "cannot record process " + std::to_string(pid) + ": " +
                                     attach_refusal(-recorded));
  }
  return AttachResult{recorded, tids};
}

Expected<int> add_threads(pid_t pid, const std::vector<pid_t>& tids) {
  Expected<std::string> threads = thread_stacks(pid, tids);
  if (!threads) return threads.error();
  if (threads->empty()) return 0;
  bool present = false;
  Expected<std::int64_t> added =
      call_agent(pid, "userperf_agent_add_threads", {*threads}, &present);
  if (!added) return added.error();
  return present && *added > 0 ? static_cast<int>(*added) : 0;
}

Expected<bool> detach_process(pid_t pid) {
  bool present = false;
  Expected<std::int64_t> result = call_agent(pid, "userperf_agent_detach", {}, &present);
  if (!result) return result.error();
  return present;
}

}  // namespace userperf::record
