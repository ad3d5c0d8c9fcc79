// Threads that userperf itself creates (the clock ticker): the agent's pthread_create interposer
// asks creating_internal_thread() and leaves such threads unsampled and unannounced.
#pragma once

namespace userperf::pmu {

// True on the calling thread while an InternalThreadScope is alive on it.
bool creating_internal_thread();

// Marks the calling thread as creating a userperf thread for the scope's lifetime (nests).
class InternalThreadScope {
 public:
  InternalThreadScope();
  ~InternalThreadScope();
  InternalThreadScope(const InternalThreadScope&) = delete;
  InternalThreadScope& operator=(const InternalThreadScope&) = delete;

 private:
  bool previous_;
};

}  // namespace userperf::pmu
