// One thread's data ring, received as a memfd from the agent and mapped here: the recorder holds
// its memory, so records committed before the thread (or its process) died are still drained.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "abi/sample_parser.hpp"
#include "perfdata/writer.hpp"
#include "record/protocol.hpp"
#include "ring/reader.hpp"

namespace userperf::record {

struct DrainCounts {
  std::uint64_t records = 0;
  std::uint64_t samples = 0;
  std::uint64_t lost = 0;  // sum of the LOST records' counts
  // Sum of the LOST_SAMPLES records' counts: periods the agent could not sample (the thread
  // blocked the clock signal).
  std::uint64_t lost_samples = 0;
  std::uint64_t samples_of[kMaxThreadEvents] = {};  // SAMPLEs by their event's config index
  std::uint64_t period_of[kMaxThreadEvents] = {};   // and the sum of their PERIODs
};

// An event whose records the ring holds: its id and attr (every attr of `userperf record` has
// PERF_SAMPLE_IDENTIFIER and sample_id_all, so each record names its event).
struct RingEvent {
  std::uint64_t id = 0;
  perf_event_attr attr{};
  std::uint32_t config_index = 0;  // below kMaxThreadEvents
};

class ThreadRing {
 public:
  // Maps the memfd (read-write: the reader stores data_tail) and checks its control page; an error
  // saying why when it is no ring. The descriptor is not kept.
  static Expected<std::unique_ptr<ThreadRing>> map(int memfd, pid_t pid, pid_t tid,
                                                   std::vector<RingEvent> events);
  ~ThreadRing();
  ThreadRing(const ThreadRing&) = delete;
  ThreadRing& operator=(const ThreadRing&) = delete;

  // Appends every committed record to `writer`, as the ring holds it (LOST records included).
  // The program can still write its ring: each record is copied out first and checked there (a
  // kernel record type, a SAMPLE that parses as its event's, a trailer naming one of the events),
  // so perf never sees a record that would stop it. A ring that turns out corrupt is reported
  // once (EBADMSG, naming the thread and what was wrong) and never read again; the records before
  // the bad one are written. When the writer failed, its error (writer.failed() tells the two
  // apart).
  Expected<void> drain(perfdata::Writer& writer, DrainCounts& counts);

  pid_t pid() const { return pid_; }
  pid_t tid() const { return tid_; }
  bool broken() const { return broken_; }
  // The id of its first event (ThreadStart's first: the ring's owner).
  std::uint64_t first_id() const { return events_.empty() ? 0 : events_.front().id; }

 private:
  ThreadRing(void* base, std::size_t length, const ring::RingView& view, pid_t pid, pid_t tid,
             std::vector<RingEvent> events);
  // Why the record in copy_ cannot be written, or empty when it can (then checked_ is its event).
  Expected<void> check_copy();
  struct CheckedEvent {
    std::uint64_t id;
    std::uint64_t sample_type;
    std::uint32_t config_index;
    abi::SampleFormat format;  // computed once: every SAMPLE of the event is parsed with it
  };
  const CheckedEvent* event_of(std::uint64_t id) const;

  void* base_;
  std::size_t length_;
  ring::Reader reader_;
  pid_t pid_, tid_;
  std::vector<CheckedEvent> events_;
  const CheckedEvent* checked_ = nullptr;  // the event of the record check_copy accepted last
  std::vector<std::uint8_t> copy_;         // the record being checked, out of the program's reach
  abi::ParsedSample parsed_;               // reused: parsing keeps its vectors' capacity
  abi::ParsedSampleId trailer_;            // the same, for non-SAMPLE records' sample_id
  // data_tail as this recorder last stored it (as found at map time before the first drain): the
  // program can write the control page, and a tail it moved would have records read twice or
  // skipped, so one that differs marks the ring corrupt.
  std::uint64_t tail_ = 0;
  bool broken_ = false;
};

}  // namespace userperf::record
