// What `userperf record` (record.cpp: a command it starts) and `userperf record -p/-t`
// (record_attach.cpp: running processes) share: the options, the setup every agent needs, and the
// summary of a finished file.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "perfdata/writer.hpp"
#include "record/protocol.hpp"
#include "record/recorder/recorder.hpp"
#include "record/recorder/spawn.hpp"
#include "support/expected.hpp"

namespace userperf::cli {

struct RecordOptions {
  std::vector<std::string> events;
  std::uint64_t frequency = 0;
  std::uint64_t period = 0;
  bool call_graph_fp = false;
  bool off_cpu = false;
  std::string call_graph;
  std::string aux;
  std::uint32_t aux_sample = 0;
  std::string bpf;
  bool no_bpf_jit = false;  // --no-bpf-jit: the --bpf program runs on the interpreter
  std::string mmap_pages;
  std::string output = "perf.data";
  bool quiet = false;
  std::vector<pid_t> pids;  // -p: running processes to attach to
  std::vector<pid_t> tids;  // -t: running threads
};

// What both ways of recording need: the config every agent gets, the agent, and the directory
// with the recorder's socket (and --bpf's image).
struct RecordSetup {
  record::RecordConfig config;
  std::string agent;
  std::unique_ptr<record::SocketDir> socket_dir;
};

// Set by SIGINT/SIGTERM (catch_stop_signals): record -p ends its recording at any of them.
extern volatile sig_atomic_t g_stop_requested;

// "userperf record: WHAT" on stderr; returns the exit status 255.
int fail(const std::string& what);
// perf's check_backup: a non-empty output of an earlier run becomes FILE.old.
void keep_old_output(const std::string& path);
// SIGKILL and reap.
void stop_child(pid_t child);
// Flags to the config, the agent found, the output checked writable, the socket directory made.
Expected<RecordSetup> prepare(const RecordOptions& options);
void catch_stop_signals();
// The progress line (about once a second; none with -q); *shown tells whether one was printed.
std::function<void(const record::RecorderStats&)> progress_line(const RecordOptions& options,
                                                                const perfdata::Writer& writer,
                                                                bool* shown);
// Clears the progress line on a terminal.
void clear_progress_line(bool shown);
// The summary of a finished file, and what was not recorded (named even with -q).
void summarize(const RecordOptions& options, record::Recorder& recorder,
               const record::RecordConfig& config);

// record -p/-t (record_attach.cpp).
int run_attach(const RecordOptions& options, const std::vector<std::string>& command);

}  // namespace userperf::cli
