// A consumer's wakeup channel with a signal-safe producer side: a non-blocking pipe whose read end
// becomes readable after wake() (poll/epoll on read_fd()), drained by drain(). What the perf data
// ring (ring/DataRing) and the eBPF ring buffer map (bpf/maps/RingbufMap) wake their consumers by.
#pragma once

#include <atomic>

namespace userperf::support {

class WakeupPipe {
 public:
  WakeupPipe() = default;
  ~WakeupPipe();
  WakeupPipe(const WakeupPipe&) = delete;
  WakeupPipe& operator=(const WakeupPipe&) = delete;

  // Creates the pipe (both ends placed: support/descriptors.hpp). 0 or -errno. SIGNAL-SAFE (two
  // system calls); once only.
  int open();
  bool is_open() const { return read_ >= 0; }
  int read_fd() const { return read_; }
  // SIGNAL-SAFE: one write(2). A full pipe already holds a pending wakeup, so EAGAIN loses nothing.
  // A write end the program closed and reused behind userperf's back is never written to.
  void wake();
  // Empties the pipe; true if at least one wakeup was pending (poll's "clear on report").
  bool drain();
  // The producer side goes away: pollers of read_fd() see POLLHUP once no process holds the write
  // end.
  void hang_up();

 private:
  int read_ = -1;
  std::atomic<int> write_{-1};
};

}  // namespace userperf::support
