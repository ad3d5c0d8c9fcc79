// Each recorded thread's events: opened on the thread itself, one ring per thread (events
// SET_OUTPUT to the ring owner), an AUX area when configured, announced with ThreadStart (the
// ring's memfd travels to the recorder) and closed at thread end (ThreadExit).
#pragma once

#include <pthread.h>
#include <sys/types.h>

#include <cstdint>
#include <vector>

#include "core/event.hpp"
#include "record/agent/session.hpp"

namespace userperf::record::agent {

// Creates the pthread key whose destructor ends a thread's recording. Once per process.
void init_thread_key();

// Sets up the calling thread (ptid: the creating thread, 0 for a process's first thread): its
// events and ring, enabled; ThreadStart waits for its first sample unless the session is eager.
// Failures leave the thread unrecorded (one stderr line per process).
void start_thread(Session& session, pid_t ptid);

// A thread of a process the agent was loaded into while it ran (attach.cpp): its events are
// opened from the calling thread, announced at once (an attached session is eager) and enabled.
// It has none of the agent's thread-local state (no offcpu-time event, no end-of-thread key): its
// events close when the session ends. False when they could not be opened.
bool start_attached_thread(Session& session, pid_t tid);

// The calling thread ends (its start routine returned, or the process calls exit()): the whole
// periods its clocks ran since their last sample are counted lost
// (pmu::count_ending_thread_periods), announcing the thread (and its process) first when the
// recorder has not heard of it, so that its EventCounts carry them and the recorder writes its
// FORK, COMM and EXIT.
void count_ending_periods();

// The clock handler's gate (pmu::set_clock_sample_gate): true once the calling thread's
// ThreadStart is sent, sending it (and Hello) first. SIGNAL-SAFE.
bool may_sample();
// Whether the calling thread's ThreadStart was sent. SIGNAL-SAFE.
bool current_thread_heard();

// The calling thread's offcpu-time event (--off-cpu), for the wrappers of blocking calls
// (offcpu_interpose.cpp): set once the thread's events are enabled, cleared before they close.
struct OffCpuTarget {
  core::Event* event = nullptr;
  pid_t pid = 0;  // the process it was opened in: a fork child's copy is not its own
  std::uint64_t stack_low = 0;
  std::uint64_t stack_high = 0;
};
// nullptr while the calling thread has no offcpu-time event. SIGNAL-SAFE, one TLS load.
const OffCpuTarget* current_offcpu_target();
// Writes one offcpu-time sample of `period` ns with `chain` on the calling thread, when the
// recorder has heard of it, or hears of it now (the thread's first sample of either event
// announces it, which makes its ring), and the session's events are not being closed by another
// thread (close_all_threads waits for writers in flight). Not in a fork child still on its
// parent's events (target.pid is the parent's). SIGNAL-SAFE.
void write_offcpu_sample(const OffCpuTarget& target, std::uint64_t ip, std::uint64_t period,
                         const std::uint64_t* chain, std::uint64_t chain_nr);

// Closes the calling thread's events and sends ThreadExit when the recorder heard of the thread.
void end_current_thread();

// Sends EventCounts for every recorded thread the recorder heard of: at exit() and before an exec,
// where the events go on counting but the process or image is about to end. Unless `may_wait`
// (an exec wrapper, maybe in a signal handler), nothing is sent while another thread holds the
// registry. Allocates nothing.
void send_all_counts(Session& session, bool may_wait);

// Closes every thread's events (the session went idle); their ThreadExit is not sent.
void close_all_threads();

// The kernel id of a recorded thread, 0 when unknown.
pid_t recorded_thread_id(pthread_t thread);

// fork: the registry's lock is held across fork (prepare/parent/child), and in the child the
// parent's threads are forgotten: their rings unmapped, their events left to the engine's copy.
// Before that, the child takes the ids of its forking thread's events (current_thread_ids), which
// its own events carry.
void lock_threads_for_fork();
void unlock_threads_after_fork();
void forget_threads_in_child();
// The final ids of the calling thread's events (config order): those the recorder heard, or the
// ones they inherited (session.inherits); empty when none is final yet.
std::vector<std::uint64_t> current_thread_ids(const Session& session);
// A lazy session's fork children take their forking thread's events over, as the kernel's
// inherited events follow a forked task: prepare_fork_inheritance (before fork, normal context)
// gives the calling thread a spare deferred ring, if it has none, and says whether it can be taken
// over. adopt_forking_thread (SIGNAL-SAFE: in the child, when its clocks follow its thread at its
// first tick) points the events at the spare and makes the thread new to the recorder; false when
// there is none. forking_thread_heard: whether the recorder had heard of the thread (its ids are
// final, and the child's carry them). take_over_registry_in_child: before the child starts threads
// (normal context), the copied registry and its lock start again with this thread alone.
bool prepare_fork_inheritance(const Session& session);
bool adopt_forking_thread(const Session& session);
bool forking_thread_heard();
void take_over_registry_in_child();

}  // namespace userperf::record::agent
