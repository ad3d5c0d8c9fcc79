#include "record/agent/thread_events.hpp"

#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <new>
#include <vector>

#include "api/engine_instance.hpp"
#include "core/engine.hpp"
#include "core/sample_data.hpp"
#include "pmu/clock/clock_timer.hpp"
#include "pmu/clock/user_context.hpp"
#include "record/agent/signal_mask.hpp"
#include "record/transport.hpp"
#include "support/descriptors.hpp"
#include "userperf/userperf.h"

namespace userperf::record::agent {
namespace {

struct ThreadEvents {
  pid_t tid = 0;
  pid_t ptid = 0;  // the creating thread, 0 for a process's first thread
  pthread_t thread{};
  std::uint64_t start_ns = 0;  // before its events were opened
  int nr = 0;
  int fds[kMaxThreadEvents] = {};
  core::Event* events[kMaxThreadEvents] = {};
  std::uint32_t clocks[kMaxThreadEvents] = {};  // poke values (ThreadStart)
  std::uint64_t ids[kMaxThreadEvents] = {};     // as its records name them, once heard
  // A fork child's events are copies of its forking thread's: what they had counted and lost at
  // the fork is the parent's (an inherited kernel event starts from 0).
  std::uint64_t count_base[kMaxThreadEvents] = {};
  std::uint64_t lost_base[kMaxThreadEvents] = {};
  void* ring = MAP_FAILED;
  std::size_t ring_length = 0;
  int ring_fd = -1;  // the engine's: travels in ThreadStart
  void* aux = MAP_FAILED;
  std::size_t aux_length = 0;
  int aux_fd = -1;
  // ThreadStart sent: from the first sample (the clock handler) or, in an eager session, at once.
  std::atomic<bool> heard{false};
  bool unannounceable = false;  // its ring's memory could not be made: it takes no sample
  // The deferred ring a fork child of this thread takes (prepare_fork_inheritance).
  core::Buffer* spare = nullptr;
  bool closed = false;  // under g_mutex once registered
};

// The calling thread's, for the clock handler's gate (may_sample).
thread_local ThreadEvents* t_thread = nullptr;
// The calling thread's offcpu-time event: read by every wrapped blocking call, so initial-exec.
__attribute__((tls_model("initial-exec"))) constinit thread_local OffCpuTarget t_offcpu{};
// close_all_threads closes other threads' events: it clears g_offcpu_open, then waits until no
// offcpu-time write is in flight (each writer counts itself in, then checks the flag).
std::atomic<bool> g_offcpu_open{true};
std::atomic<int> g_offcpu_writers{0};

pthread_key_t g_key;
std::mutex g_mutex;  // recorded_threads() and every registered ThreadEvents::closed
// The recorded threads. Never destroyed: threads may still end while exit() runs static
// destructors; and built on first use, as the constructor may run before this file's initializers.
std::vector<ThreadEvents*>*& recorded_threads_storage() {
  static auto* threads = new std::vector<ThreadEvents*>();
  return threads;
}
std::vector<ThreadEvents*>& recorded_threads() {
  return *recorded_threads_storage();
}
std::atomic<bool> g_setup_failure_said{false};

// What t's events counted and lost so far (EventCounts).
void read_counts(const ThreadEvents& t, EventCountsMessage& counts) {
  counts.tid = t.tid;
  counts.time = monotonic_ns();
  counts.nr_events = static_cast<std::uint32_t>(t.nr);
  for (int i = 0; i < t.nr; ++i) {
    EventCount& c = counts.events[i];
    c.config_index = static_cast<std::uint32_t>(i);
    c.id = t.ids[i];
    c.count = t.events[i]->count.load(std::memory_order_relaxed) - t.count_base[i];
    c.lost = t.events[i]->lost_samples.load(std::memory_order_relaxed) - t.lost_base[i];
  }
}

// `counts` (may be null): what the events counted and lost, read once they are stopped.
void close_events(ThreadEvents& t, EventCountsMessage* counts = nullptr) {
  // Stopped while the ring is still mapped: a clock that stops counts what its thread could not
  // sample (LOST_SAMPLES) into it.
  for (int i = 0; i < t.nr; ++i) userperf_ioctl(t.fds[i], PERF_EVENT_IOC_DISABLE, 0);
  if (counts != nullptr) read_counts(t, *counts);
  if (t.aux != MAP_FAILED) userperf_munmap(t.aux, t.aux_length);
  if (t.ring != MAP_FAILED) userperf_munmap(t.ring, t.ring_length);
  t.aux = t.ring = MAP_FAILED;
  // Members before their leaders.
  for (int i = t.nr - 1; i >= 0; --i) userperf_close(t.fds[i]);
  t.nr = 0;
  t.closed = true;
}

bool fail_setup(ThreadEvents& t, const char* what, const char* name) {
  const int err = errno;
  if (!g_setup_failure_said.exchange(true)) {
    say("thread %d: %s %s: %s; the thread is not recorded", t.tid, what, name, std::strerror(err));
  }
  close_events(t);
  return false;
}

bool is_sampling(const perf_event_attr& attr) {
  return attr.sample_period != 0;  // sample_freq shares the field
}

// Opens the configured events on the calling thread, maps its ring (and AUX area), points the
// others at it and attaches the --bpf program. Events are left disabled.
bool open_events(const Session& session, ThreadEvents& t) {
  const RecordConfig& config = session.config;
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  for (std::size_t i = 0; i < config.events.size(); ++i) {
    const EventConfig& event = config.events[i];
    perf_event_attr attr = event.attr;
    attr.disabled = 1;  // enabled once the ring is in place
    const int group_fd = event.group_leader >= 0 ? t.fds[event.group_leader] : -1;
    const int fd = userperf_perf_event_open(&attr, t.tid, -1, group_fd, 0);
    if (fd < 0) return fail_setup(t, "cannot open", event.name.c_str());
    t.fds[t.nr++] = fd;
    // A fork child's events stand for its forking thread's: they carry those ids.
    if (!session.inherited_ids.empty() &&
        api::engine().inherit_id(fd, session.inherited_ids[i]) != 0) {
      return fail_setup(t, "cannot inherit the id of", event.name.c_str());
    }
    t.events[i] = api::engine().event(fd);
    if (t.events[i] == nullptr) return fail_setup(t, "no event behind", event.name.c_str());
    t.clocks[i] = pmu::clock_poke_value(*t.events[i]);
  }
  const int owner = t.fds[session.ring_owner];
  const char* owner_name = config.events[session.ring_owner].name.c_str();
  if (!session.eager) {
    // Its memory is made at the thread's first sample (announce_thread): a thread that ends
    // before one costs no memfd and no mapping.
    if (const int err = api::engine().defer_ring(owner, config.ring_pages); err != 0) {
      errno = -err;
      return fail_setup(t, "cannot make the ring of", owner_name);
    }
  } else {
    t.ring_length = (1 + std::size_t{config.ring_pages}) * page;
    t.ring = userperf_mmap(nullptr, t.ring_length, PROT_READ | PROT_WRITE, MAP_SHARED, owner, 0);
    if (t.ring == MAP_FAILED) return fail_setup(t, "cannot map the ring of", owner_name);
    t.ring_fd = userperf_event_ring_fd(owner);
  }
  if (session.eager && config.aux_pages > 0) {
    auto* control = static_cast<perf_event_mmap_page*>(t.ring);
    control->aux_offset = t.ring_length;
    control->aux_size = std::size_t{config.aux_pages} * page;
    t.aux_length = control->aux_size;
    // Read-only: overwrite mode, a flight recorder that samples (PERF_SAMPLE_AUX) copy from.
    t.aux = userperf_mmap(nullptr, t.aux_length, PROT_READ, MAP_SHARED, owner,
                          static_cast<off_t>(control->aux_offset));
    if (t.aux == MAP_FAILED) return fail_setup(t, "cannot map the AUX area of", owner_name);
    t.aux_fd = userperf_event_aux_fd(owner);
  }
  for (int i = 0; i < t.nr; ++i) {
    if (i != session.ring_owner && userperf_ioctl(t.fds[i], PERF_EVENT_IOC_SET_OUTPUT,
                                                  static_cast<unsigned long>(owner)) != 0) {
      return fail_setup(t, "cannot redirect the output of", config.events[i].name.c_str());
    }
    if (session.bpf_prog >= 0 && is_sampling(config.events[i].attr) &&
        userperf_ioctl(t.fds[i], PERF_EVENT_IOC_SET_BPF,
                       static_cast<unsigned long>(session.bpf_prog)) != 0) {
      return fail_setup(t, "cannot attach the --bpf program to", config.events[i].name.c_str());
    }
  }
  return true;
}

// ThreadStart, after Hello: the thread's events take their final ids (the Welcome's base plus the
// engine's own id, unless the process inherits its forking thread's) before their first record,
// and the ring's memfd travels to the recorder. SIGNAL-SAFE: from the thread's first sample. False
// while another thread says Hello, and when the recorder is gone.
bool announce_thread(Session& session, ThreadEvents& t) {
  if (t.heard.load(std::memory_order_acquire)) return true;
  if (t.unannounceable) return false;
  if (!session.active.load() || !say_hello(session)) return false;
  const std::uint64_t id_base = session.id_base.load(std::memory_order_relaxed);
  ThreadStartMessage message;
  message.pid = session.pid;
  message.tid = t.tid;
  message.ptid = t.ptid;
  message.time = t.start_ns;
  message.nr_events = static_cast<std::uint32_t>(t.nr);
  message.clock_signo = pmu::clock_signal();
  for (int i = 0; i < t.nr; ++i) {
    if (!session.inherits) t.events[i]->primary_id.store(id_base + t.events[i]->id);
    t.ids[i] = t.events[i]->primary_id.load();
    message.events[i].config_index = static_cast<std::uint32_t>(i);
    message.events[i].id = t.ids[i];
    message.events[i].clock = t.clocks[i];
  }
  // A deferred ring gets its memory now (core::Engine::materialize_ring: signal-safe).
  if (t.ring_fd < 0) {
    t.ring_fd = core::Engine::materialize_ring(*t.events[session.ring_owner]);
    if (t.ring_fd < 0) {
      t.unannounceable = true;
      say_from_handler("a thread's ring could not be made; the thread is not recorded");
      return false;
    }
  }
  int fds[kMaxMessageFds] = {t.ring_fd, -1};
  int nfds = 1;
  if (t.aux_fd >= 0) {
    fds[nfds++] = t.aux_fd;
    message.has_aux = 1;
  }
  // Raw: no go_idle here (it closes events, which a signal handler must not). A session whose
  // send failed is inactive; the thread takes no sample again.
  if (support::owns_descriptor(session.socket) && !support::still_ours(session.socket))
    return false;
  if (send_message(session.socket, &message, sizeof message, fds, nfds) != 0) {
    session.active.store(false);
    return false;
  }
  t.heard.store(true, std::memory_order_release);
  return true;
}

void register_thread(ThreadEvents* t) {
  std::lock_guard lock(g_mutex);
  recorded_threads().push_back(t);
}

// Unregisters t and closes its events unless going idle already did (then `counts`, may be null,
// is left with no event).
void unregister_thread(ThreadEvents* t, EventCountsMessage* counts = nullptr) {
  std::lock_guard lock(g_mutex);
  std::erase(recorded_threads(), t);
  if (!t->closed) close_events(*t, counts);
}

void finish_thread(ThreadEvents* t) {
  if (t_thread == t) {
    t_offcpu = OffCpuTarget{};  // before its events close
    count_ending_periods();
  }
  // Closing stops the clocks, which may count periods lost and so announce the thread: t stays
  // the thread's until then.
  EventCountsMessage counts;
  unregister_thread(t, &counts);
  if (t_thread == t) t_thread = nullptr;
  if (t->spare != nullptr) core::Engine::drop_spare_ring(t->spare);
  Session* session = current_session();
  if (session != nullptr && t->heard.load()) {
    if (counts.nr_events != 0) {
      counts.pid = session->pid;
      send(*session, &counts, sizeof counts);
    }
    ThreadExitMessage message;
    message.pid = session->pid;
    message.tid = t->tid;
    message.time = monotonic_ns();
    send(*session, &message, sizeof message);
  }
  delete t;
}

void end_thread(void* value) {
  finish_thread(static_cast<ThreadEvents*>(value));
}

}  // namespace

// The clock handler's gate (pmu::set_clock_sample_gate): a thread's first sample waits for its
// ThreadStart, which says Hello first when the process has not. SIGNAL-SAFE.
bool may_sample() {
  ThreadEvents* t = t_thread;
  if (t == nullptr || t->heard.load(std::memory_order_relaxed)) return true;
  Session* session = current_session();
  return session != nullptr && announce_thread(*session, *t);
}

bool current_thread_heard() {
  const ThreadEvents* t = t_thread;
  return t != nullptr && t->heard.load(std::memory_order_relaxed);
}

void init_thread_key() {
  pthread_key_create(&g_key, end_thread);
}

namespace {

// Opens thread `tid`'s events (from the calling thread), registers them and, in an eager session,
// announces the thread; they are left disabled. nullptr when that failed (the session may have
// gone idle).
ThreadEvents* open_thread(Session& session, pid_t tid, pid_t ptid) {
  auto* t = new ThreadEvents();
  t->start_ns = monotonic_ns();
  t->tid = tid;
  t->ptid = ptid;
  if (tid == current_thread_id()) t->thread = pthread_self();
  bool opened;
  {
    ScopedEngineCallback in_engine;  // a tracepoint's format may be sent from inside open
    opened = open_events(session, *t);
  }
  if (!opened) {
    delete t;
    if (!session.active.load()) go_idle(session);
    return nullptr;
  }
  register_thread(t);
  // Registered before this check: go_idle either sees the thread or ran before the check. An
  // eager session announces the thread now; otherwise its first sample does.
  if (!session.active.load() || (session.eager && !announce_thread(session, *t))) {
    unregister_thread(t);
    delete t;
    go_idle(session);
    return nullptr;
  }
  return t;
}

void enable_thread(const ThreadEvents& t) {
  std::lock_guard lock(g_mutex);
  for (int i = 0; i < t.nr && !t.closed; ++i) userperf_ioctl(t.fds[i], PERF_EVENT_IOC_ENABLE, 0);
}

}  // namespace

void start_thread(Session& session, pid_t ptid) {
  ThreadEvents* t = open_thread(session, current_thread_id(), ptid);
  if (t == nullptr) return;
  pthread_setspecific(g_key, t);
  t_thread = t;
  enable_thread(*t);
  for (int i = 0; i < t->nr; ++i) {
    if (session.config.events[static_cast<std::size_t>(i)].name != kOffCpuEventName) continue;
    OffCpuTarget target;
    target.event = t->events[i];
    target.pid = support::current_pid();
    const pmu::StackBounds stack = pmu::current_thread_stack();
    target.stack_low = stack.low;
    target.stack_high = stack.high;
    t_offcpu = target;
  }
}

bool start_attached_thread(Session& session, pid_t tid) {
  ThreadEvents* t = open_thread(session, tid, 0);
  if (t == nullptr) return false;
  enable_thread(*t);
  return true;
}

const OffCpuTarget* current_offcpu_target() {
  return t_offcpu.event != nullptr ? &t_offcpu : nullptr;
}

namespace {

// A thread's first off-CPU sample announces it, as its first CPU sample would (a thread that only
// waits is heard of too). The clock signal is blocked meanwhile: its handler announces as well,
// and must not run inside this announcement. SIGNAL-SAFE.
bool announce_for_offcpu() {
  ThreadEvents* t = t_thread;
  if (t == nullptr) return false;
  if (t->heard.load(std::memory_order_relaxed)) return true;
  Session* session = current_session();
  if (session == nullptr) return false;
  const ClockSignalBlocked blocked;
  return announce_thread(*session, *t);
}

}  // namespace

void count_ending_periods() {
  if (t_thread == nullptr) return;
  const ClockSignalBlocked blocked;  // the handler takes periods and announces too
  pmu::count_ending_thread_periods(blocked.was_blocked());
}

void write_offcpu_sample(const OffCpuTarget& target, std::uint64_t ip, std::uint64_t period,
                         const std::uint64_t* chain, std::uint64_t chain_nr) {
  if (target.pid != support::current_pid() || !announce_for_offcpu()) return;
  g_offcpu_writers.fetch_add(1);
  if (g_offcpu_open.load() &&
      target.event->state.load(std::memory_order_acquire) == core::EventState::kActive) {
    core::SampleExtras extras;
    core::SampleData data;
    data.extras = &extras;
    data.ip = ip;
    data.period = period;
    data.pid = static_cast<std::uint32_t>(support::current_pid());
    data.tid = static_cast<std::uint32_t>(support::current_tid());
    data.cpu = static_cast<std::uint32_t>(sched_getcpu());
    data.cpumode = PERF_RECORD_MISC_USER;
    if ((target.event->attr.sample_type & PERF_SAMPLE_CALLCHAIN) != 0) {
      extras.callchain = chain;
      extras.callchain_nr = chain_nr;
    }
    // A software event's own overflow (perf_swevent_overflow's first): not throttled.
    api::engine().overflow(*target.event, data, false);
  }
  g_offcpu_writers.fetch_sub(1);
}

void end_current_thread() {
  auto* t = static_cast<ThreadEvents*>(pthread_getspecific(g_key));
  if (t == nullptr) return;
  pthread_setspecific(g_key, nullptr);
  finish_thread(t);
}

void send_all_counts(Session& session, bool may_wait) {
  if (!session.active.load() || !heard(session) || session.pid != getpid()) return;
  std::unique_lock lock(g_mutex, std::defer_lock);
  if (may_wait) {
    lock.lock();
  } else if (!lock.try_lock()) {
    return;
  }
  // Raw sends, as announce_thread's: a failed send must not go idle, which takes the lock.
  if (support::owns_descriptor(session.socket) && !support::still_ours(session.socket)) return;
  for (const ThreadEvents* t : recorded_threads()) {
    if (t->closed || !t->heard.load()) continue;
    EventCountsMessage counts;
    read_counts(*t, counts);
    counts.pid = session.pid;
    if (send_message(session.socket, &counts, sizeof counts) != 0) {
      session.active.store(false);
      return;
    }
  }
}

void close_all_threads() {
  g_offcpu_open.store(false);
  while (g_offcpu_writers.load() != 0) sched_yield();
  std::lock_guard lock(g_mutex);
  for (ThreadEvents* t : recorded_threads()) {
    if (!t->closed) close_events(*t);
  }
}

pid_t recorded_thread_id(pthread_t thread) {
  std::lock_guard lock(g_mutex);
  for (const ThreadEvents* t : recorded_threads()) {
    if (pthread_equal(t->thread, thread)) return t->tid;
  }
  return 0;
}

void lock_threads_for_fork() {
  g_mutex.lock();
}

void unlock_threads_after_fork() {
  g_mutex.unlock();
}

std::vector<std::uint64_t> current_thread_ids(const Session& session) {
  const ThreadEvents* t = t_thread;
  if (t == nullptr || t->closed || (!t->heard.load() && !session.inherits)) return {};
  std::vector<std::uint64_t> ids;
  ids.reserve(static_cast<std::size_t>(t->nr));
  for (int i = 0; i < t->nr; ++i) ids.push_back(t->events[i]->primary_id.load());
  return ids;
}

void forget_threads_in_child() {
  std::lock_guard lock(g_mutex);
  for (ThreadEvents* t : recorded_threads()) {
    // Their engine objects stay the engine's copy's (inert: no timer, no thread in the child);
    // unmapped with munmap(2), not through the engine.
    if (t->aux != MAP_FAILED) munmap(t->aux, t->aux_length);
    if (t->ring != MAP_FAILED) munmap(t->ring, t->ring_length);
    delete t;
  }
  recorded_threads().clear();
  pthread_setspecific(g_key, nullptr);
  t_thread = nullptr;
}

bool prepare_fork_inheritance(const Session& session) {
  ThreadEvents* t = t_thread;
  // Only a lazy session's thread (its ring deferred, never mapped here) can be taken over.
  if (t == nullptr || t->closed || t->ring != MAP_FAILED || t->nr == 0) return false;
  if (t->spare == nullptr) {
    t->spare = core::Engine::make_spare_ring(*t->events[session.ring_owner],
                                             session.config.ring_pages, kMaxThreadEvents);
  }
  return t->spare != nullptr;
}

bool adopt_forking_thread(const Session& session) {
  ThreadEvents* t = t_thread;
  if (t == nullptr || t->spare == nullptr) return false;
  t->tid = current_thread_id();
  t->ptid = 0;
  t->start_ns = monotonic_ns();
  t->heard.store(false);
  t->ring_fd = -1;
  t->unannounceable = false;
  for (int i = 0; i < t->nr; ++i) {
    t->count_base[i] = t->events[i]->count.load(std::memory_order_relaxed);
    t->lost_base[i] = t->events[i]->lost_samples.load(std::memory_order_relaxed);
  }
  core::Engine::adopt_spare_ring(t->events, t->nr, session.ring_owner, t->spare);
  t->spare = nullptr;
  return true;
}

bool forking_thread_heard() {
  const ThreadEvents* t = t_thread;
  return t != nullptr && t->heard.load();
}

void take_over_registry_in_child() {
  // The copy of a lock another thread of the parent may have held at the fork, and of a registry
  // it may have been changing: both start again, with this thread alone.
  new (&g_mutex) std::mutex();
  ThreadEvents* kept = t_thread;
  auto* threads = new std::vector<ThreadEvents*>();
  if (kept != nullptr) threads->push_back(kept);
  recorded_threads_storage() = threads;
}

}  // namespace userperf::record::agent
