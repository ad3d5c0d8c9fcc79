// The recorder's state of one agent connection, shared by recorder.cpp (the loop, the end of a
// connection) and agent_messages.cpp (what each message changes). Private to the recorder.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "record/recorder/recorder.hpp"

namespace userperf::record {

// Each connection's ids lie in [id_base + 1, id_base + kIdRange): one process cannot take
// another's.
inline constexpr std::uint64_t kIdRange = std::uint64_t{1} << 32;

struct Recorder::Connection {
  int fd = -1;
  std::uint64_t number = 0;
  std::uint64_t id_base = 0;
  pid_t pid = 0;  // 0 until Hello
  bool welcomed = false;
  bool inherits = false;  // a fork child: its events carry ids its parent's ThreadStart named
  // An agent loaded into a running process (record -p): its connection ends at a detach, an exec
  // or the process's exit, never because the program closed it. Its clocks are poked by its own
  // ticker thread, never by this recorder: a poke that raced an exec would reach a program that
  // does not catch the signal (an in-process poke is discarded by the exec).
  bool attached = false;
  bool main_exit_written = false;
  // The connection ended while its process runs on (the program closed the agent's socket with a
  // raw system call): its rings are still drained until the process ends or execs.
  bool orphaned = false;
  std::uint64_t orphaned_at = 0;  // CLOCK_MONOTONIC when it was found orphaned
  bool exited = false;            // its ProcessExit came: the end of the connection is the exit
  bool exec_pending = false;      // an ExecNotice came: the end of this connection is an exec
  std::map<pid_t, std::unique_ptr<ThreadRing>> rings;  // by tid
  std::map<pid_t, ThreadClocks> clocks;                // by tid: those with a clock
  std::map<pid_t, std::string> comms;                  // by tid: the last name it was given
  std::set<std::string> reported;                      // problems said once
};

}  // namespace userperf::record
