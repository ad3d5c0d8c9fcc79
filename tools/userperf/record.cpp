// `userperf record [options] -- COMMAND [ARGS]`: runs the command with the agent preloaded and
// writes what every thread of it sampled to a perf.data file (src/record/recorder).
// `userperf record -p PID [-- COMMAND]`: the same for running processes, the agent loaded into
// them with ptrace (src/record/attach).
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "abi/attr_rules.hpp"
#include "api/engine_instance.hpp"
#include "bpf/isa/image_codec.hpp"
#include "bpf/loader/elf_loader.hpp"
#include "bpf/perf/bpf_registry.hpp"
#include "commands.hpp"
#include "perfdata/writer.hpp"
#include "pmu/clock/clock_ticker.hpp"
#include "record.hpp"
#include "record/attach/attach.hpp"
#include "record/exec_target.hpp"
#include "record/recorder/event_config.hpp"
#include "record/recorder/process_state.hpp"
#include "record/recorder/recorder.hpp"
#include "record/recorder/spawn.hpp"
#include "userperf/userperf.h"

namespace userperf::cli {

volatile sig_atomic_t g_stop_requested = 0;

namespace {

volatile sig_atomic_t g_pending_signal = 0;

// Forwarded to the command once, unless the terminal sent it (SI_KERNEL): the command is in the
// recorder's process group and got its own copy; a second ^C would make many programs skip
// their orderly shutdown.
void on_stop_signal(int signal, siginfo_t* info, void*) {
  if (info == nullptr || info->si_code != SI_KERNEL) g_pending_signal = signal;
  g_stop_requested = 1;
}

// The exit status the way a shell reports it.
int exit_status_of(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 255;
}

// Loads --bpf's object here, once. Its program is verified with the verifier every recorded
// process runs, so that a program the verifier rejects is refused before the command starts (as
// perf refuses a bad filter) with the verifier's reason: the last lines of its log, down to the
// failing instruction. The object's image is what those processes load (bpf/isa/image_codec.hpp):
// none of them parses ELF, and the agent links neither libbpf nor libelf.
Expected<std::vector<std::uint8_t>> load_bpf_object(const std::string& path, bool jit) {
  auto image = bpf::load_elf_file(path);
  if (!image) {
    return make_error(image.error().code, "--bpf " + path + ": " + image.error().message);
  }
  std::string log;
  const int prog = api::bpf_registry().load_program(*image, "", &log, {.jit = jit});
  if (prog >= 0) {
    userperf_close(prog);
    return bpf::encode_object_image(*image);
  }
  const int err = -prog;
  std::vector<std::string> lines;
  std::string line;
  for (const char c : log) {
    if (c != '\n') {
      line += c;
    } else if (!line.empty()) {
      lines.push_back(std::move(line));
      line.clear();
    }
  }
  if (!line.empty()) lines.push_back(std::move(line));
  // The reason comes before the closing "processed N insns" line.
  while (!lines.empty() && lines.back().rfind("processed ", 0) == 0) lines.pop_back();
  std::string message = "--bpf " + path + ": " + std::strerror(err);
  if (!lines.empty()) {
    message +=
        (err == EACCES || err == EINVAL ? " (the verifier rejected it): " : ": ") + lines.back();
    const std::size_t from = lines.size() > 4 ? lines.size() - 4 : 0;
    for (std::size_t i = from; i + 1 < lines.size(); ++i) message += "\n  " + lines[i];
  }
  return make_error(err, message);
}

Expected<void> build_request(const RecordOptions& o, record::RecordRequest& request,
                             std::vector<std::uint8_t>& bpf_image) {
  request.events = o.events;
  request.frequency = o.frequency;
  request.period = o.period;
  request.off_cpu = o.off_cpu;
  if (o.call_graph_fp) request.call_graph = record::CallGraph::kFramePointer;
  if (!o.call_graph.empty()) {
    if (Expected<void> parsed = record::parse_call_graph(o.call_graph, request); !parsed) {
      return parsed;
    }
  }
  if (o.aux == "calltrace") request.aux = record::AuxSource::kCalltrace;
  if (o.aux == "log") request.aux = record::AuxSource::kLog;
  if (o.aux_sample != 0 && request.aux == record::AuxSource::kNone) {
    return make_error(EINVAL, "--aux-sample needs --aux");
  }
  request.aux_sample_size = o.aux_sample;
  if (!o.bpf.empty()) {
    Expected<std::vector<std::uint8_t>> image = load_bpf_object(o.bpf, !o.no_bpf_jit);
    if (!image) return image.error();
    bpf_image = std::move(*image);
  }
  if (o.mmap_pages.empty()) return {};
  return record::parse_mmap_pages(o.mmap_pages, request);
}

// The output's directory must be writable and the output no directory: checked before the command
// starts, since the file itself is created only once it runs.
Expected<void> output_writable(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return make_error(EISDIR, path + " is a directory");
  }
  const std::size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path.substr(0, slash);
  if (access(dir.c_str(), W_OK | X_OK) != 0) {
    const int err = errno;
    return make_error(err, "cannot write " + path + ": " + std::strerror(err));
  }
  return {};
}

// Processes that exec'd a program the agent cannot enter: they ran unrecorded. Named even with -q.
void report_unrecorded(const record::Recorder& recorder) {
  const auto& processes = recorder.unrecorded_processes();
  if (processes.empty()) return;
  std::string names;
  for (const auto& [pid, p] : processes) {
    names += "\n  " + std::to_string(pid) + " (" + p.comm + "): " + p.reason;
  }
  std::fprintf(stderr, "userperf record: %zu process%s ran without the agent (not recorded):%s\n",
               processes.size(), processes.size() == 1 ? "" : "es", names.c_str());
}

// The command itself must be a program the agent can enter: refused before it starts otherwise,
// with the way out.
Expected<void> command_enterable(const std::string& file) {
  char path[4096];
  if (!record::resolve_command(file.c_str(), std::getenv("PATH"), path, sizeof path)) {
    return {};  // not found: the spawn says so (exit 127)
  }
  const record::ExecTarget target = record::check_exec_file(path, geteuid(), getegid());
  if (target != record::ExecTarget::kStatic && target != record::ExecTarget::kSecure) return {};
  return make_error(ENOEXEC,
                    std::string(path) + " is " + record::describe(target) +
                        ": userperf's agent cannot enter it, so nothing of it would be recorded. " +
                        (target == record::ExecTarget::kStatic
                             ? "Build it dynamically linked, or record it with kernel perf record "
                               "where perf_event_open is allowed."
                             : "Run userperf record as the program's owner (or root), or record it "
                               "with kernel perf record."));
}

// Threads that blocked the sampling signal where the agent could not see it (a raw
// rt_sigprocmask): their periods are in the file as LOST_SAMPLES; each is named here, even with -q.
void report_unsampled(const record::Recorder& recorder) {
  const auto& threads = recorder.unsampled_threads();
  if (threads.empty()) return;
  std::string names;
  for (const auto& [tid, t] : threads) {
    names += (names.empty() ? "" : ", ") + std::to_string(tid) + " (" +
             (t.comm.empty() ? "?" : t.comm) + "): " + std::to_string(t.periods);
  }
  std::fprintf(stderr,
               "userperf record: %llu samples not taken: %zu thread%s blocked the sampling signal "
               "(a raw rt_sigprocmask the agent cannot see): %s\n",
               static_cast<unsigned long long>(recorder.stats().unsampled), threads.size(),
               threads.size() == 1 ? "" : "s", names.c_str());
}

// Threads the recorder could not poke between their scheduler ticks (their /proc/PID/task/TID/
// syscall refused, or the signal): sampled on their ticks alone, so fewer samples than asked for.
void report_unpokable(record::Recorder& recorder) {
  const record::TickerStats stats = recorder.ticker_stats();
  if (stats.unpokable_threads == 0) return;
  std::fprintf(stderr,
               "userperf record: %u thread%s could not be poked between scheduler ticks (%s); "
               "sampled on their ticks alone, at most HZ times a second, PERIOD-weighted\n",
               stats.unpokable_threads, stats.unpokable_threads == 1 ? "" : "s",
               std::strerror(stats.unpokable_errno));
}

// Each recorded tracepoint's hits: fired (its events' counts), written (its samples in the file)
// and lost (in full rings, or refused); with period 1 and no --bpf filter written + lost == fired.
void report_tracepoints(const record::RecordConfig& config, const record::RecorderStats& stats) {
  bool any = false;
  for (std::size_t i = 0; i < config.events.size() && i < stats.events.size(); ++i) {
    if (config.events[i].attr.type != PERF_TYPE_TRACEPOINT) continue;
    any = true;
    const record::EventTotals& e = stats.events[i];
    std::fprintf(stderr, "[ userperf record: %s: %llu fired, %llu written, %llu lost ]\n",
                 config.events[i].name.c_str(), static_cast<unsigned long long>(e.fired),
                 static_cast<unsigned long long>(e.written),
                 static_cast<unsigned long long>(e.lost));
  }
  if (any && stats.uncounted_threads != 0) {
    std::fprintf(stderr,
                 "userperf record: %u thread%s ended without saying what %s events counted (a "
                 "process killed, or one that left by _exit): %s hits are not in the fired counts, "
                 "%s losses only as far as "
                 "%s rings told\n",
                 stats.uncounted_threads, stats.uncounted_threads == 1 ? "" : "s",
                 stats.uncounted_threads == 1 ? "its" : "their",
                 stats.uncounted_threads == 1 ? "its" : "their",
                 stats.uncounted_threads == 1 ? "its" : "their",
                 stats.uncounted_threads == 1 ? "its" : "their");
  }
}

// A clock event whose samples carry much less CPU time than it counted: the rest ran in the kernel
// (under exclude_kernel no sample is taken there, as in kernel perf's perf_exclude_event), or its
// periods waited for a scheduler tick that found the thread in the kernel (docs/record.md, Limits:
// system-call-dense programs beside busy ones). Said, so that a short profile is not taken for
// the program's whole time. Not where a thread's counts never came (its process was killed), nor
// where a --bpf filter drops samples by design.
void report_clock_coverage(const record::RecordConfig& config, const record::RecorderStats& stats) {
  if (stats.uncounted_threads != 0 || !config.bpf_image.empty()) return;
  for (std::size_t i = 0; i < config.events.size() && i < stats.events.size(); ++i) {
    const perf_event_attr& attr = config.events[i].attr;
    if (attr.type != PERF_TYPE_SOFTWARE ||
        (attr.config != PERF_COUNT_SW_CPU_CLOCK && attr.config != PERF_COUNT_SW_TASK_CLOCK)) {
      continue;
    }
    // A clock at -F samples every 1/F s of CPU time, as the kernel's clocks do.
    const std::uint64_t period =
        attr.freq ? (attr.sample_freq != 0 ? 1'000'000'000 / attr.sample_freq : 0)
                  : attr.sample_period;
    const record::EventTotals& e = stats.events[i];
    const std::uint64_t lost_ns = e.lost * period;
    if (e.fired == 0 || (e.written_period + lost_ns) * 10 >= e.fired * 9) continue;
    const auto ms = [](std::uint64_t ns) { return static_cast<double>(ns) / 1e6; };
    std::fprintf(stderr,
                 "userperf record: %s: its samples carry %.0f ms of the %.0f ms of CPU time it "
                 "counted (%.0f%%; %.0f ms counted lost); the rest found the program in the kernel "
                 "(no sample there under exclude_kernel, as in kernel perf), or waited for a "
                 "scheduler tick that found it there (a program making system calls back to back "
                 "beside busy ones: docs/record.md, Limits)\n",
                 config.events[i].name.c_str(), ms(e.written_period), ms(e.fired),
                 100.0 * static_cast<double>(e.written_period) / static_cast<double>(e.fired),
                 ms(lost_ns));
  }
}
}  // namespace

int fail(const std::string& what) {
  std::fprintf(stderr, "userperf record: %s\n", what.c_str());
  return 255;
}

// perf's check_backup: a non-empty output of an earlier run becomes FILE.old.
void keep_old_output(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) == 0 && st.st_size > 0) {
    const std::string old = path + ".old";
    unlink(old.c_str());
    rename(path.c_str(), old.c_str());
  }
}

void stop_child(pid_t child) {
  kill(child, SIGKILL);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
}

// The summary of a finished file, and what was not recorded (named even with -q).
void summarize(const RecordOptions& options, record::Recorder& recorder,
               const record::RecordConfig& config) {
  if (!options.quiet) {
    struct stat st {};
    stat(options.output.c_str(), &st);
    const record::RecorderStats& s = recorder.stats();
    // Lost: the file's LOST_SAMPLES, what perf report counts as its Total Lost Samples.
    std::fprintf(stderr,
                 "[ userperf record: Captured and wrote %.3f MB %s (%llu samples, %llu lost) ]\n",
                 static_cast<double>(st.st_size) / (1024.0 * 1024.0), options.output.c_str(),
                 static_cast<unsigned long long>(s.samples),
                 static_cast<unsigned long long>(s.lost_samples));
    report_tracepoints(config, s);
    report_clock_coverage(config, s);
  }
  report_unsampled(recorder);
  report_unpokable(recorder);
  report_unrecorded(recorder);
}

Expected<RecordSetup> prepare(const RecordOptions& options) {
  record::RecordRequest request;
  std::vector<std::uint8_t> bpf_image;
  if (Expected<void> built = build_request(options, request, bpf_image); !built) {
    return built.error();
  }
  const int aux_type =
      request.aux == record::AuxSource::kNone
          ? -1
          : userperf_pmu_type(request.aux == record::AuxSource::kCalltrace ? "calltrace" : "log");
  Expected<record::RecordConfig> built_config = record::build_record_config(request, aux_type);
  if (!built_config) return built_config.error();
  RecordSetup setup;
  setup.config = std::move(*built_config);
  Expected<std::string> agent = record::find_agent();
  if (!agent) return agent.error();
  setup.agent = std::move(*agent);
  if (Expected<void> writable = output_writable(options.output); !writable) {
    return writable.error();
  }
  Expected<std::unique_ptr<record::SocketDir>> created_dir = record::SocketDir::create();
  if (!created_dir) return created_dir.error();
  setup.socket_dir = std::move(*created_dir);
  if (!bpf_image.empty()) {
    Expected<std::string> image_path = setup.socket_dir->add_file("bpf.image", bpf_image);
    if (!image_path) return image_path.error();
    setup.config.bpf_image = std::move(*image_path);
    if (options.no_bpf_jit) setup.config.flags |= record::kConfigBpfInterpreter;
  }
  record::RecordConfig& config = setup.config;
  config.ticker_pid = getpid();  // the recorder pokes the command's clocks (record/recorder/ticker)
  const abi::OpenLimits limits = abi::host_limits();  // read once, here, for every process
  config.max_sample_rate = limits.max_sample_rate;
  config.max_stack = limits.max_stack;
  config.paranoid = limits.paranoid;
  config.nr_cpus = static_cast<std::uint32_t>(limits.nr_cpus);
  return setup;
}

std::function<void(const record::RecorderStats&)> progress_line(const RecordOptions& options,
                                                                const perfdata::Writer& writer,
                                                                bool* shown) {
  // On a terminal one line rewritten in place; in a log, one line per update.
  const bool terminal = isatty(STDERR_FILENO) != 0;
  return [&options, &writer, shown, terminal](const record::RecorderStats& s) {
    if (options.quiet) return;
    std::fprintf(stderr, "%s[ userperf record: %llu samples, %llu lost, %.3f MB ]%s",
                 terminal ? "\r" : "", static_cast<unsigned long long>(s.samples),
                 static_cast<unsigned long long>(s.lost),
                 static_cast<double>(writer.data_size()) / (1024.0 * 1024.0), terminal ? "" : "\n");
    *shown = true;
  };
}

void clear_progress_line(bool shown) {
  if (shown && isatty(STDERR_FILENO) != 0) std::fputs("\r\x1b[K", stderr);
}

void catch_stop_signals() {
  struct sigaction action {};
  action.sa_sigaction = on_stop_signal;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

namespace {

int run_record(const RecordOptions& options, const std::vector<std::string>& command) {
  if (!options.pids.empty() || !options.tids.empty()) return run_attach(options, command);
  if (command.empty()) return fail("no command given (userperf record [options] -- COMMAND)");
  if (Expected<void> enterable = command_enterable(command.front()); !enterable) {
    return fail(enterable.error().message);
  }
  Expected<RecordSetup> prepared = prepare(options);
  if (!prepared) return fail(prepared.error().message);
  record::RecordConfig& config = prepared->config;
  std::unique_ptr<record::SocketDir> socket_dir = std::move(prepared->socket_dir);
  record::SpawnRequest spawn;
  spawn.argv = command;
  spawn.agent = prepared->agent;
  if (options.off_cpu) {
    spawn.before_agent = record::find_condvar(spawn.agent);
#if defined(__x86_64__)
    if (spawn.before_agent.empty()) {
      std::fprintf(stderr,
                   "userperf record: warning: no libuserperf_condvar.so beside %s: "
                   "pthread_cond_wait and pthread_cond_timedwait are not measured\n",
                   spawn.agent.c_str());
    }
#endif
  }
  spawn.socket_path = socket_dir->socket_path();
  spawn.config = config.encode();

  catch_stop_signals();
  int exec_errno = 0;
  const Expected<pid_t> spawned = record::spawn_command(spawn, &exec_errno);
  if (!spawned) {
    std::fprintf(stderr, "userperf record: %s\n", spawned.error().message.c_str());
    return exec_errno == ENOENT ? 127 : exec_errno != 0 ? 126 : 255;
  }
  const pid_t child = *spawned;

  // After the spawn (an ignored signal is inherited across exec): a reader of our stderr that
  // goes away (`userperf record ... 2>&1 | head`) makes writes fail, not the recorder die.
  signal(SIGPIPE, SIG_IGN);
  keep_old_output(options.output);
  auto created = perfdata::Writer::create(options.output);
  if (!created) {
    stop_child(child);
    return fail(created.error().message);
  }
  std::unique_ptr<perfdata::Writer> writer = std::move(*created);
  record::Recorder recorder(socket_dir->listen_fd(), config, *writer, stderr);
  int wait_status = 0;
  bool progress_shown = false;
  const auto progress = progress_line(options, *writer, &progress_shown);
  const bool ran =
      recorder.begin() && recorder.run(child, &wait_status, &g_pending_signal, progress);
  const auto failure = [&] {
    return writer->failed() ? writer->error().message
                            : "writing " + options.output + ": recording failed";
  };
  const auto kept = [&] {
    return std::to_string(writer->checkpointed_size() / 1024) + " KiB of records";
  };
  if (!ran && waitpid(child, &wait_status, WNOHANG) == 0) {
    // The recorder gave up (a full disk, /dev/full): said at once. The command runs on
    // unrecorded, its agents told so by their closed connections and, for new processes, the
    // socket's absence; its exit status is still the one returned.
    clear_progress_line(progress_shown);
    std::fprintf(stderr,
                 "userperf record: %s; recording stopped, the command runs on unrecorded (the file "
                 "keeps %s)\n",
                 failure().c_str(), kept().c_str());
    recorder.abandon();
    socket_dir.reset();
    while (waitpid(child, &wait_status, 0) < 0 && errno == EINTR) {
    }
  }
  const bool finished = ran && recorder.finish();
  // The summary replaces the progress line on a terminal.
  clear_progress_line(progress_shown);
  if (!finished) {
    std::fprintf(stderr,
                 "userperf record: %s is incomplete (%s): perf reads its first %s, without the "
                 "header features\n",
                 options.output.c_str(), failure().c_str(), kept().c_str());
    report_unsampled(recorder);
    report_unpokable(recorder);
    report_unrecorded(recorder);
    return exit_status_of(wait_status);
  }
  summarize(options, recorder, config);
  return exit_status_of(wait_status);
}

}  // namespace

void add_record_command(CLI::App& app, int& exit_code) {
  static RecordOptions options;
  CLI::App* cmd = app.add_subcommand(
      "record",
      "run a command with the userperf agent preloaded and write its samples to perf.data");
  cmd->add_option("-e,--event", options.events,
                  "events: cpu-clock, task-clock, provider:tracepoint (comma-separated)")
      ->delimiter(',');
  auto* freq = cmd->add_option("-F,--freq", options.frequency, "sampling frequency in Hz (1000)")
                   ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1'000'000}));
  cmd->add_option("-c,--count", options.period, "sampling period (events between samples)")
      ->check(CLI::Range(std::uint64_t{1}, ~std::uint64_t{0} >> 1))
      ->excludes(freq);
  auto* g = cmd->add_flag("-g", options.call_graph_fp, "frame-pointer call graphs");
  cmd->add_option("--call-graph", options.call_graph, "fp, dwarf or dwarf,SIZE")->excludes(g);
  cmd->add_flag("--off-cpu", options.off_cpu,
                "also record the time threads spend blocked (event offcpu-time)");
  cmd->add_option("--aux", options.aux, "AUX source in each thread's group: calltrace or log")
      ->check(CLI::IsMember({"calltrace", "log"}));
  cmd->add_option("--aux-sample", options.aux_sample, "AUX bytes per sample (4096 with --aux)")
      ->check(CLI::Range(1u, 65000u));
  auto* bpf = cmd->add_option("--bpf", options.bpf, "eBPF object whose program handles overflows")
                  ->check(CLI::ExistingFile);
  cmd->add_flag("--no-bpf-jit", options.no_bpf_jit,
                "run the --bpf program on the interpreter (default: the x86-64 JIT)")
      ->needs(bpf);
  cmd->add_option("-m,--mmap-pages", options.mmap_pages, "ring pages per thread[,AUX pages]");
  cmd->add_option("-o,--output", options.output, "output file")->capture_default_str();
  cmd->add_flag("-q,--quiet", options.quiet, "no progress line and summary");
  cmd->add_option("-p,--pid", options.pids,
                  "record running processes (comma-separated pids) until ^C or COMMAND ends")
      ->delimiter(',');
  cmd->add_option("-t,--tid", options.tids, "record running threads (comma-separated tids)")
      ->delimiter(',');
  // Everything from the command's name on is the command's (perf's "stop at non-option").
  static std::vector<std::string> command;
  cmd->add_option("command", command, "the command to record and its arguments");
  cmd->positionals_at_end();
  cmd->callback([&exit_code] { exit_code = run_record(options, command); });
}

}  // namespace userperf::cli
