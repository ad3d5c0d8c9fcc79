// Each recorded thread's events: opened on the thread itself, one ring per thread (events
// SET_OUTPUT to the ring owner), an AUX area when configured, announced with ThreadStart (the
// ring's memfd travels to the recorder) and closed at thread end (ThreadExit).
#pragma once

#include <pthread.h>
#include <sys/types.h>

#include <cstdint>
#include <vector>

#include "record/agent/session.hpp"

namespace userperf::record::agent {

// Creates the pthread key whose destructor ends a thread's recording. Once per process.
void init_thread_key();

// Sets up the calling thread (ptid: the creating thread, 0 for a process's first thread): its
// events and ring, enabled; ThreadStart waits for its first sample unless the session is eager.
// Failures leave the thread unrecorded (one stderr line per process).
void start_thread(Session& session, pid_t ptid);

// The clock handler's gate (pmu::set_clock_sample_gate): true once the calling thread's
// ThreadStart is sent, sending it (and Hello) first. SIGNAL-SAFE.
bool may_sample();
// Whether the calling thread's ThreadStart was sent. SIGNAL-SAFE.
bool current_thread_heard();

// Closes the calling thread's events and sends ThreadExit when the recorder heard of the thread.
void end_current_thread();

// Closes every thread's events (the session went idle); their ThreadExit is not sent.
void close_all_threads();

// The kernel id of a recorded thread, 0 when unknown.
pid_t recorded_thread_id(pthread_t thread);

// fork: the registry's lock is held across fork (prepare/parent/child), and in the child the
// parent's threads are forgotten: their rings unmapped, their events left to the old engine. Before
// that, the child takes the ids of its forking thread's events (config order; empty when that
// thread was not recorded), which its own events inherit.
void lock_threads_for_fork();
void unlock_threads_after_fork();
std::vector<std::uint64_t> current_thread_ids();
void forget_threads_in_child();

}  // namespace userperf::record::agent
