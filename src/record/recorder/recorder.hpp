// The recorder of `userperf record`: one thread that polls the agents' socket, answers Hello with
// an id range, maps each thread's ring, synthesizes the records the kernel would have written
// (COMM, FORK, EXIT, MMAP2) and drains every ring into a perf.data Writer until the command ends.
//
// No FINISHED_ROUND is written: records of different rings and of the messages interleave in time,
// and a round promises that nothing older follows it. Without rounds perf sorts the whole file by
// time before it delivers records, which is what a file with several unordered streams needs.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "perfdata/writer.hpp"
#include "record/exec_target.hpp"
#include "record/protocol.hpp"
#include "record/recorder/process_state.hpp"
#include "record/recorder/thread_ring.hpp"
#include "record/recorder/ticker.hpp"

namespace userperf::record {

// One configured event over every thread: what its threads' events counted (fired: for a user
// tracepoint, its hits), the samples of it written to the file, and the samples lost. With
// period 1 and no --bpf filter, written + lost == fired.
struct EventTotals {
  std::uint64_t fired = 0;
  std::uint64_t written = 0;
  std::uint64_t lost = 0;
  std::uint64_t written_period = 0;  // the written samples' PERIODs, summed
};

struct RecorderStats {
  std::uint64_t samples = 0;
  std::uint64_t lost = 0;       // the ring LOST records' counts, as drained
  std::uint64_t unsampled = 0;  // LOST_SAMPLES: periods of threads that blocked the clock signal
  std::uint64_t records = 0;    // ring records written
  std::uint32_t processes = 0;
  std::uint32_t threads = 0;
  // After finish(): the file's LOST_SAMPLES counts (perf report's "Total Lost Samples"): the
  // unsampled periods and every event's lost samples.
  std::uint64_t lost_samples = 0;
  std::vector<EventTotals> events;  // by config index; fired and lost after finish()
  // Threads whose events' counts never came (their process was killed): their losses are the
  // LOST records' only, and what they fired is unknown.
  std::uint32_t uncounted_threads = 0;
};

class Recorder {
 public:
  // The id the recorder's own records (COMM, MMAP2 ...) carry: listed under attr 0, never given to
  // an agent (id bases start at 1 << 32).
  static constexpr std::uint64_t kSyntheticId = 1;

  // listen_fd: the listening socket (non-blocking); log: where problems are reported.
  Recorder(int listen_fd, RecordConfig config, perfdata::Writer& writer, std::FILE* log);
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // Adds the attrs (config order), their names and PMU mappings, and this host's features.
  bool begin();

  // Runs until `child` exits; *wait_status is its waitpid status. `pending_signal` (may be null):
  // set by a SIGINT/SIGTERM handler; the signal is forwarded to the child once. `progress` (may be
  // empty) is called about once a second. False when the writer failed (its error says why).
  bool run(pid_t child, int* wait_status, const volatile sig_atomic_t* pending_signal = nullptr,
           const std::function<void(const RecorderStats&)>& progress = {});

  // The same loop until `done` (called about every 15 ms) returns true: for processes the
  // recorder did not start (record -p), whose ends it learns otherwise.
  bool run_until(const std::function<bool()>& done,
                 const std::function<void(const RecorderStats&)>& progress = {});

  // Drains what is left, adds BUILD_ID (and TRACING_DATA with tracepoints) and finishes the file.
  bool finish();
  // Gives up recording: every connection is closed (without draining), so the command's agents
  // go idle at their next send instead of waiting on a recorder that no longer reads.
  void abandon();

  const RecorderStats& stats() const { return stats_; }

  // A thread some of whose periods could not be sampled (LOST_SAMPLES in its ring).
  struct UnsampledThread {
    pid_t pid = 0;
    pid_t tid = 0;
    std::string comm;  // when it was first seen losing periods
    std::uint64_t periods = 0;
  };
  const std::map<pid_t, UnsampledThread>& unsampled_threads() const { return unsampled_; }

  // A process that exec'd a program the agent cannot enter (its agent said so just before).
  struct UnrecordedProcess {
    std::string comm;    // the program's file name
    std::string reason;  // exec_target.hpp's describe()
  };
  const std::map<pid_t, UnrecordedProcess>& unrecorded_processes() const { return unrecorded_; }

  // The pokes between the recorded threads' ticks (ticker.hpp).
  TickerStats ticker_stats() { return ticker_.stats(); }

 private:
  struct Connection;
  struct Process {
    pid_t ppid = 0;
    Connection* image = nullptr;        // the connection of its current image
    std::vector<FileMapping> mappings;  // MMAP2s written for the current image
    std::uint64_t maps_read_at = 0;     // CLOCK_MONOTONIC of the last /proc/PID/maps read
    std::uint64_t start_time = 0;       // read_start_time: tells an exec from a reused pid
    std::string comm;                   // its main thread's name, as last written
  };

  void accept_all();
  // Reads every queued message of `c`; false when the connection ended or broke.
  bool receive_all(Connection& c);
  bool handle(Connection& c, const std::uint8_t* message, std::size_t size, int* fds, int nfds);
  bool on_hello(Connection& c, const HelloMessage& m);
  // The name the thread `tid` of process `pid` was last given, as far as this recorder knows.
  std::string known_comm(pid_t pid, pid_t tid);
  // COMM, FORK and MMAP2 for the image that said Hello. False when the writer failed.
  bool write_image_state(Connection& c, const HelloMessage& m);
  bool on_thread_start(Connection& c, const ThreadStartMessage& m, int* fds, int nfds);
  bool on_thread_exit(Connection& c, const ThreadExitMessage& m);
  void on_busy_clock(Connection& c, const BusyClockMessage& m);
  void on_event_counts(Connection& c, const EventCountsMessage& m);
  // The LOST_SAMPLES of every thread's losses (perf record's record__read_lost_samples), and the
  // events' totals. False when the writer failed.
  bool write_lost_samples();
  bool rescan_mappings(std::uint64_t now);
  bool write_new_mappings(pid_t pid, std::uint64_t time, bool all);
  void close_connection(Connection& c);
  bool drain_all();
  bool drain(Connection& c);
  // One ring into the file; a corrupt ring is reported once. False when the writer failed.
  bool drain_ring(Connection& c, ThreadRing& ring);
  // EXIT for thread `tid` of c's process. False when the writer failed.
  bool write_exit(Connection& c, pid_t tid, std::uint64_t time);
  void report(const std::string& what);
  void report_once(Connection& c, const std::string& what);
  SyntheticStamp stamp(std::uint64_t time) const { return {time, kSyntheticId}; }
  const perf_event_attr& synthetic_attr() const { return config_.events.front().attr; }

  int listen_fd_;
  RecordConfig config_;
  perfdata::Writer& writer_;
  std::FILE* log_;
  std::vector<std::unique_ptr<Connection>> connections_;
  std::uint64_t connections_seen_ = 0;
  std::map<pid_t, Process> processes_;
  std::map<std::uint64_t, std::uint32_t> ids_;  // every event id a ThreadStart named: config index
  std::set<std::string> files_;                 // every file an MMAP2 named, for BUILD_ID
  std::map<std::uint32_t, std::string> tracepoint_formats_;  // config index -> format
  std::vector<std::uint8_t> buffer_;                         // one received message
  RecorderStats stats_;
  std::map<pid_t, UnsampledThread> unsampled_;  // by tid
  // What each recorded thread's events counted and lost, by (pid, tid, its first event's id): a
  // tid of an exec'd image has new ids.
  struct ThreadTotals {
    std::uint64_t ring_lost = 0;  // its LOST records' counts
    bool counted = false;         // an EventCounts came: `counts` holds the latest
    EventCountsMessage counts;
  };
  std::map<std::tuple<pid_t, pid_t, std::uint64_t>, ThreadTotals> thread_totals_;
  std::map<pid_t, UnrecordedProcess> unrecorded_;
  bool failed_ = false;  // the writer failed
  Ticker ticker_;
};

}  // namespace userperf::record
