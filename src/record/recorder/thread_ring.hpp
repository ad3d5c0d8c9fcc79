// One thread's data ring, received as a memfd from the agent and mapped here: the recorder holds
// its memory, so records committed before the thread (or its process) died are still drained.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>

#include "perfdata/writer.hpp"
#include "ring/reader.hpp"

namespace userperf::record {

struct DrainCounts {
  std::uint64_t records = 0;
  std::uint64_t samples = 0;
  std::uint64_t lost = 0;  // sum of the LOST records' counts
};

class ThreadRing {
 public:
  // Maps the memfd (read-write: the reader stores data_tail) and checks its control page. nullptr
  // with `error` when it is no ring. The descriptor is not kept.
  static std::unique_ptr<ThreadRing> map(int memfd, pid_t pid, pid_t tid, std::string& error);
  ~ThreadRing();
  ThreadRing(const ThreadRing&) = delete;
  ThreadRing& operator=(const ThreadRing&) = delete;

  // Appends every committed record to `writer`, as the ring holds it (LOST records included).
  // A ring that turns out corrupt is reported once through `error`, and never read again: false
  // with `error` set. False with `error` empty when the writer failed.
  bool drain(perfdata::Writer& writer, DrainCounts& counts, std::string& error);

  pid_t pid() const { return pid_; }
  pid_t tid() const { return tid_; }
  bool broken() const { return broken_; }

 private:
  ThreadRing(void* base, std::size_t length, const ring::RingView& view, pid_t pid, pid_t tid);
  void* base_;
  std::size_t length_;
  ring::Reader reader_;
  pid_t pid_, tid_;
  bool broken_ = false;
};

}  // namespace userperf::record
