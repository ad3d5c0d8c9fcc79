// The recorder <-> agent protocol of `userperf record` (docs/record.md).
//
// The recorder (the `userperf record` process) listens on a unix SOCK_SEQPACKET socket whose path
// it puts in USERPERF_RECORD_SOCKET, and what to record in USERPERF_RECORD_CONFIG (RecordConfig,
// text); LD_PRELOAD loads the agent (libuserperf_agent.so) into the command and every process it
// forks or execs. Each process image connects once and says Hello; the recorder answers Welcome
// with an id base that makes the event ids of that image unique in the file. A fork child says
// Hello with `inherits` and waits for nothing: its events carry the ids of the thread that forked
// it, as the kernel's inherited events do. Every thread opens
// the configured events on itself, maps one data ring (and an AUX area when configured) and sends
// ThreadStart with the ring's memfd (SCM_RIGHTS): from then on the recorder holds the ring's
// memory and drains it, whatever happens to the process. End of connection = the image is gone
// (exit, exec, kill -9).
//
// Messages are fixed little structs (same machine, same ABI) starting with MessageHeader; the
// recorder checks every size and field before use (a reader never trusts a producer).
#pragma once

#include <linux/perf_event.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "support/expected.hpp"

namespace userperf::record {

inline constexpr const char* kSocketEnv = "USERPERF_RECORD_SOCKET";
inline constexpr const char* kConfigEnv = "USERPERF_RECORD_CONFIG";
inline constexpr std::uint32_t kProtocolVersion = 3;
inline constexpr std::size_t kMaxMessageSize = 64 * 1024;
inline constexpr int kMaxMessageFds = 2;  // a ring memfd and an AUX memfd

// One event every thread opens. attr is exactly what the perf.data file says about it; for a
// user tracepoint attr.type is PERF_TYPE_TRACEPOINT and attr.config the id the recorder gave the
// name (the same in every process).
struct EventConfig {
  perf_event_attr attr{};
  std::string name;       // "cpu-clock", "task-clock", "provider:tracepoint", "calltrace"
  int group_leader = -1;  // index of the leader in RecordConfig::events, -1: none / itself
};

// --off-cpu's event, as kernel perf names it (tools/perf/util/bpf_off_cpu.c: a bpf-output event
// named "offcpu-time" whose samples have the blocked nanoseconds as PERIOD). The agent's wrappers
// of blocking calls write its samples.
inline constexpr const char* kOffCpuEventName = "offcpu-time";

enum class AuxSource : std::uint32_t { kNone = 0, kCalltrace = 1, kLog = 2 };

// RecordConfig::flags. --no-bpf-jit: the --bpf program runs on the interpreter in every process.
inline constexpr std::uint32_t kConfigBpfInterpreter = 1u << 0;

struct RecordConfig {
  std::vector<EventConfig> events;   // events[0] owns the thread's ring; others SET_OUTPUT to it
  std::uint32_t ring_pages = 0;      // data pages per thread ring (power of two)
  std::uint32_t aux_pages = 0;       // AUX area pages per thread (power of two), 0: none
  AuxSource aux = AuxSource::kNone;  // the AUX leader is the event of that source's PMU
  // --bpf: a file holding the object the recorder loaded (bpf/isa/image_codec.hpp), whose first
  // perf_event program handles overflows: no process of the command parses ELF.
  std::string bpf_image;
  std::uint32_t flags = 0;  // kConfig* bits
  // The recorder, which pokes the agents' clocks (pmu::ExternalTicker); 0: each process pokes its
  // own with a ticker thread.
  std::int32_t ticker_pid = 0;
  // The recorder's reading of kernel.perf_event_max_sample_rate, _max_stack, _paranoid and the
  // possible CPUs (abi::host_limits), which each process takes instead of reading /proc; all 0:
  // none (each reads its own).
  std::uint32_t max_sample_rate = 0;
  std::uint32_t max_stack = 0;
  std::int32_t paranoid = 0;
  std::uint32_t nr_cpus = 0;

  // "key=value" lines; attrs as hex of their bytes. decode() checks everything and says why not.
  std::string encode() const;
  static Expected<RecordConfig> decode(const std::string& text);
};

enum class MessageType : std::uint32_t {
  kHello = 1,        // agent -> recorder, first message of a connection
  kWelcome = 2,      // recorder -> agent, the answer to Hello
  kThreadStart = 3,  // + SCM_RIGHTS: ring memfd [, AUX memfd]
  kThreadExit = 4,
  // 5 is retired: a dlopen notice (wrapping dlopen changed how glibc resolves the name).
  kComm = 6,          // a thread renamed itself
  kTracepoint = 7,    // a recorded tracepoint registered: its format
  kProcessExit = 8,   // orderly exit (exit(), return from main); absent after kill -9
  kExecNotice = 9,    // a process is about to exec (or its exec failed)
  kBusyClock = 10,    // a thread's clock wants pokes (from the clock signal handler)
  kEventCounts = 11,  // a thread's events' totals: at its end, and at exit() for every thread
};

struct MessageHeader {
  std::uint32_t type = 0;
  std::uint32_t size = 0;  // of the whole message, header included
};

struct HelloMessage {
  MessageHeader header{static_cast<std::uint32_t>(MessageType::kHello), sizeof(HelloMessage)};
  std::uint32_t version = kProtocolVersion;
  std::int32_t pid = 0;
  std::int32_t ppid = 0;
  std::int32_t parent_tid = 0;  // the thread that forked this process; 0 when not a fork child
  std::uint64_t time = 0;       // CLOCK_MONOTONIC ns, before any event of this image exists
  // 1: a fork child whose events carry the ids of its forking thread's (the kernel's inherited
  // events report their parent's id). It waits for no Welcome: nothing is answered.
  std::uint32_t inherits = 0;
  // 1: an agent loaded into a running process (`userperf record -p`): the process was not started
  // by the recorder, and its end of the connection is a detach, an exec or its exit.
  std::uint32_t attached = 0;
};

struct WelcomeMessage {
  MessageHeader header{static_cast<std::uint32_t>(MessageType::kWelcome), sizeof(WelcomeMessage)};
  std::uint32_t accepted = 0;  // 0: the recorder refuses (the agent stays idle)
  std::uint32_t reserved = 0;
  std::uint64_t id_base = 0;  // event ids of this image start above it
};

// One event of a thread: which configured event it is, the id its records carry, and for a clock
// (cpu-clock, task-clock) what names it in the pokes that make its handler count (12 bits of slot,
// 20 of generation: pmu/clock/clock_signal_value.hpp; 0 for any other event).
struct EventId {
  std::uint32_t config_index = 0;
  std::uint32_t clock = 0;
  std::uint64_t id = 0;
};

inline constexpr std::uint32_t kMaxThreadEvents = 16;

struct ThreadStartMessage {
  MessageHeader header{static_cast<std::uint32_t>(MessageType::kThreadStart),
                       sizeof(ThreadStartMessage)};
  std::int32_t pid = 0;
  std::int32_t tid = 0;
  std::int32_t ptid = 0;      // the creating thread; 0 for a process's first thread
  std::uint32_t has_aux = 0;  // 1: a second descriptor, the AUX area's memfd, follows the ring's
  std::uint64_t time = 0;     // before the thread's events were opened
  std::uint32_t nr_events = 0;
  std::int32_t clock_signo = 0;  // the signal its clocks are poked with
  EventId events[kMaxThreadEvents];
};

struct ThreadExitMessage {
  MessageHeader header{static_cast<std::uint32_t>(MessageType::kThreadExit),
                       sizeof(ThreadExitMessage)};
  std::int32_t pid = 0;
  std::int32_t tid = 0;
  std::uint64_t time = 0;  // after the thread's events were closed
};

struct CommMessage {
  MessageHeader header{static_cast<std::uint32_t>(MessageType::kComm), sizeof(CommMessage)};
  std::int32_t pid = 0;
  std::int32_t tid = 0;
  std::uint64_t time = 0;
  char comm[16] = {};  // NUL-terminated
};

// Sent by the exec wrappers before every exec: the connection's end that follows is the image's,
// not the program closing the agent's socket; and a target the agent cannot enter
// (exec_target.hpp) is named at the end. Sent again with `failed` when the exec failed and the
// image goes on.
struct ExecNoticeMessage {
  MessageHeader header{static_cast<std::uint32_t>(MessageType::kExecNotice),
                       sizeof(ExecNoticeMessage)};
  std::int32_t pid = 0;      // the caller's (a vfork child's differs from the connection's)
  std::uint32_t target = 0;  // an ExecTarget
  std::uint32_t failed = 0;  // 1: the exec failed
  std::uint32_t reserved = 0;
  char path[256] = {};  // the program, NUL-terminated (cut to fit)
};

// A thread its own CPU-time timer found busy while no poke came (pmu::ExternalTicker): the
// recorder pokes its clocks (rt_tgsigqueueinfo of ThreadStart's clock_signo, SI_QUEUE, si_value
// pmu::clock_poke of each clock) every period while it runs outside system calls.
struct BusyClockMessage {
  MessageHeader header{static_cast<std::uint32_t>(MessageType::kBusyClock),
                       sizeof(BusyClockMessage)};
  std::int32_t pid = 0;
  std::int32_t tid = 0;
};

// Followed by format_size bytes of text (libtraceevent's "format" file of the tracepoint).
struct TracepointMessage {
  MessageHeader header{static_cast<std::uint32_t>(MessageType::kTracepoint), 0};
  std::uint32_t config_index = 0;
  std::uint32_t format_size = 0;
};

// What a thread's event counted and lost (read(2)'s value and PERF_FORMAT_LOST's), as perf record
// reads them at its end: the recorder writes each loss as PERF_RECORD_LOST_SAMPLES (losses whose
// LOST record never made it into the ring included) and says fired, written and lost per event.
struct EventCount {
  std::uint32_t config_index = 0;
  std::uint32_t reserved = 0;
  std::uint64_t id = 0;     // as the thread's records name the event
  std::uint64_t count = 0;  // the event's value: for a tracepoint, its hits
  std::uint64_t lost = 0;   // samples it could not write (ring full, record too large)
};
// Sent when a thread's events are closed (before ThreadExit) and, at exit(), for every thread still
// recorded (before ProcessExit). A later message for a thread replaces an earlier one.
struct EventCountsMessage {
  MessageHeader header{static_cast<std::uint32_t>(MessageType::kEventCounts),
                       sizeof(EventCountsMessage)};
  std::int32_t pid = 0;
  std::int32_t tid = 0;
  std::uint64_t time = 0;  // when the counts were read
  std::uint32_t nr_events = 0;
  std::uint32_t reserved = 0;
  EventCount events[kMaxThreadEvents];
};

struct ProcessExitMessage {
  MessageHeader header{static_cast<std::uint32_t>(MessageType::kProcessExit),
                       sizeof(ProcessExitMessage)};
  std::int32_t pid = 0;
  std::int32_t status = 0;  // exit() status
  std::uint64_t time = 0;
};

}  // namespace userperf::record
