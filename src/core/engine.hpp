// Engine: userperf's "kernel". Owns events, buffers and mappings, and implements the semantics of
// perf_event_open, ioctl, mmap/munmap, read, close and poll. Every entry point but overflow() takes
// the engine lock; overflow() is the signal-safe write path PMUs call. engine.cpp holds the syscall
// surface, engine_sched.cpp the event states, engine_mmap.cpp the mappings and the buffers behind
// them, engine_side_band.cpp the side-band records.
#pragma once

#include <linux/perf_event.h>
#include <poll.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/event.hpp"
#include "core/output_guard.hpp"
#include "core/overflow.hpp"
#include "core/pmu.hpp"
#include "core/sample_data.hpp"
#include "ring/aux_ring.hpp"

namespace userperf::core {

// A data ring with the mappings of it and the events that write into it.
struct Buffer {
  std::unique_ptr<ring::DataRing> ring;
  Event* owner = nullptr;  // the event whose mmap created it (nullptr once closed)
  int mappings = 0;        // live mmaps, the AUX area's included (rb->mmap_count)
  // Made by defer_ring: one of `mappings` stands for no mapping and is given back when the owner
  // closes; the ring's memory is made by materialize_ring.
  bool deferred = false;
  std::vector<Event*> events;  // every event whose rb points here
  // The AUX area (rb->aux_*), its live mmaps and where it is mapped.
  std::unique_ptr<ring::AuxRing> aux;
  int aux_mappings = 0;
  std::uint64_t aux_pgoff = 0;
};

struct Mapping {
  std::uintptr_t start = 0;
  std::size_t length = 0;
  Buffer* buffer = nullptr;
  Event* event = nullptr;  // the event that was mapped (nullptr once closed)
  bool aux = false;        // the AUX area, not the control page and data pages
};

struct EngineLimits {
  std::uint32_t max_sample_rate = 100000;  // kernel.perf_event_max_sample_rate
  std::uint32_t max_stack = 127;           // kernel.perf_event_max_stack
  std::uint32_t hz = 250;
};

class Engine {
 public:
  Engine();
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Registers a PMU under `type` (or the next dynamic type when -1). Returns the type.
  int register_pmu(Pmu& pmu, int type = -1);
  int pmu_type(const char* name);

  // Syscall mirrors: a descriptor / 0 on success, a negative errno on failure.
  int open(perf_event_attr* uattr, pid_t pid, int cpu, int group_fd, unsigned long flags);
  int close(int fd);
  int ioctl(int fd, unsigned long request, unsigned long arg);
  // The mapping, or err_ptr(-errno) as the kernel's mmap path returns it (is_err and ptr_err in
  // support/expected.hpp).
  void* mmap(void* addr, std::size_t length, int prot, int flags, int fd, off_t offset);
  int munmap(void* addr, std::size_t length);
  ssize_t read(int fd, void* buf, std::size_t count);
  int poll(pollfd* fds, nfds_t nfds, int timeout_ms);
  int wakeup_fd(int fd);
  int ring_fd(int fd);
  int aux_fd(int fd);

  // What mmap(fd, (1 + data_pages) pages, PROT_READ | PROT_WRITE) creates - a ring the event and
  // those SET_OUTPUT to it write into - without a mapping in this process and with its memory made
  // only by materialize_ring: until then their records are dropped as an unmapped event's are. The
  // recorder's agent gives every thread one, and makes its memory at the thread's first sample, so
  // that a process that ends before one costs no memfd. The ring goes when the event closes.
  // 0 or -errno (-EBUSY: the event has a ring already).
  int defer_ring(int fd, std::size_t data_pages);
  // SIGNAL-SAFE (no lock, no allocation): makes the memory of the deferred ring `event` owns and
  // points every event of it there. Returns the ring's memfd (the consumer maps it; still the
  // engine's), or -errno. Only from one thread at a time for a ring, and not while the event is
  // closed: the recorder's agent calls it on the event's own thread.
  static int materialize_ring(Event& event);
  // The consumer's AUX snapshot protocol, under the engine lock so that no ioctl interleaves:
  // disable (the source ends its handle and publishes aux_head), read aux_head, copy the newest
  // min(len, area size, aux_head) bytes, re-enable if it was enabled. Returns bytes or -errno.
  ssize_t aux_snapshot(int fd, void* buf, std::size_t len, std::uint64_t* head_out);

  // True when fd is a userperf event.
  bool is_event(int fd);
  // A reference to the event behind fd that outlives close(fd) (what a PERF_EVENT_ARRAY slot
  // holds): nullptr when fd is no event (EBADF). Every get_event is paired with a put_event.
  Event* get_event(int fd);
  void put_event(Event* event);
  // Who resolves PERF_EVENT_IOC_SET_BPF's program descriptors (the bpf runtime registers itself).
  void set_handler_resolver(HandlerResolver* resolver);
  // The event behind fd, for PMUs and tests; valid until the fd is closed.
  Event* event(int fd);

  // The write path: `event` overflowed. SIGNAL-SAFE. `throttle` is __perf_event_overflow's (see
  // perf_event_overflow in overflow.hpp): true for a PMU's interrupt or timer, false for the first
  // overflow of a software event's count (count_and_overflow says which).
  OverflowResult overflow(Event& event, SampleData& data, bool throttle);
  GracePeriod& grace_period() { return grace_; }

  // Side-band records the engine's users call for (task and mapping changes, symbols): written to
  // every active event that asked for them (attr.comm, attr.mmap2 / mmap, attr.task, attr.ksymbol)
  // and whose target matches.
  void comm(pid_t pid, pid_t tid, const char* comm, bool exec);
  void mmap2(pid_t pid, pid_t tid, std::uint64_t addr, std::uint64_t len, std::uint64_t pgoff,
             std::uint32_t maj, std::uint32_t min, std::uint64_t ino, std::uint32_t prot,
             std::uint32_t flags, const char* filename, bool exec);
  void fork(pid_t pid, pid_t ppid, pid_t tid, pid_t ptid);
  // Task exit: EXIT records, and per-task events of `tid` report POLLHUP from then on.
  void exit(pid_t pid, pid_t ppid, pid_t tid, pid_t ptid);
  // Inheritance (attr.inherit; the kernel's perf_event_init_task and perf_event_exit_task), for
  // threads of this process only. inherit_task: thread `child` was just created by thread `parent`
  // (called on the child, before it runs its own code): every inherit event of `parent`, original
  // or inherited, is cloned for `child`, groups with their leader; the clones count and sample
  // `child` into their original's ring, and reads of the original include them. exit_task: `tid`
  // ends (on it, after its EXIT records): its clones fold their counts and times into their
  // originals and go, each writing a PERF_RECORD_READ first under inherit_stat.
  void inherit_task(pid_t parent, pid_t child);
  void exit_task(pid_t tid);
  // The clones inherit_task made for `tid` (tests drive their PMUs through them).
  std::vector<Event*> inherited_events(pid_t tid);
  // Events with attr.inherit open in any engine of the process: a thread hook with nothing to
  // inherit returns at once.
  static bool any_inherit_events() { return inherit_events_.load(std::memory_order_relaxed) > 0; }

  void ksymbol(std::uint64_t addr, std::uint32_t len, std::uint16_t ksym_type, std::uint16_t flags,
               const char* name);

  void set_limits(const EngineLimits& limits);
  EngineLimits limits();
  // A deferred ring (defer_ring) attached to no event yet, with room for `max_events` events: the
  // one a fork child's thread takes in a signal handler (adopt_spare_ring). The thread that forks
  // makes it before the fork; the parent never uses it, so every child finds it in its copy of
  // the memory. `like` gives the ring's settings. No engine holds it: freed by drop_spare_ring
  // unless adopted, and an adopted one stays when its events close (a fork child's).
  static Buffer* make_spare_ring(const Event& like, std::size_t data_pages, int max_events);
  static void drop_spare_ring(Buffer* spare);
  // SIGNAL-SAFE, in a fork child with one thread (the engine's lock is not taken: it may have been
  // held by a thread of the parent at the fork): events[0..n), the forking thread's, leave their
  // ring - the parent's, mapped shared in the child too - for `spare`, owned by events[owner].
  // Their records are dropped until materialize_ring. No allocation: the spare has room for n
  // events.
  static void adopt_spare_ring(Event* const* events, int n, int owner, Buffer* spare);

  // Ids of events opened from now on are above `base` (a recorder gives each process image its
  // own range, so ids stay unique in one perf.data file).
  void set_id_base(std::uint64_t base);
  // The event stands for event `primary_id` of a parent process (the recorder's agent in a fork
  // child): its records name it by that id from now on, as the kernel's inherited events report
  // their parent's (primary_event_id). Before it records anything. 0 or -errno.
  int inherit_id(int fd, std::uint64_t primary_id);

 private:
  // engine.cpp
  Event* lookup(int fd);  // engine lock held
  int open_locked(perf_event_attr* uattr, pid_t pid, int cpu, int group_fd, unsigned long flags);
  int check_output(const Event& event, const Event& target) const;
  int set_output(Event& event, Event* target);
  void detach_output(Event& event);
  void reset(Event& event);
  int set_period(Event& event, std::uint64_t value);
  int check_aux_event(Event& event, Event* leader) const;
  short poll_event(Event& event);
  int set_bpf(Event& event, unsigned long prog_fd);
  // Unlinks a closed, unreferenced event; the caller frees it after releasing the lock.
  std::unique_ptr<Event> release_event(Event& event);
  int apply(Event& event, unsigned long arg, void (Engine::*fn)(Event&));
  Event* inherit_event(Event& from, pid_t child, Event* leader);
  // engine_sched.cpp
  void enable(Event& event);
  void disable(Event& event);
  void schedule(Event& event, std::uint64_t now);
  void update_user_page(Event& event);
  // engine_mmap.cpp
  void* mmap_aux(Event& event, void* addr, std::size_t pages, int prot, int flags,
                 std::uint64_t offset);  // the mapping or err_ptr(-errno), as mmap
  void free_aux(Buffer& buffer);
  void release_buffer(Buffer* buffer);
  // What ring_fd, aux_fd and wakeup_fd share: `of` the event's buffer, -EBADF for no event,
  // -EINVAL for one without a buffer.
  int buffer_descriptor(int fd, int (*of)(const Buffer& buffer));
  // engine_side_band.cpp
  void log_itrace_start(Event& event);
  // perf_event_task: a FORK or EXIT record to the events of thread `of` that asked for them.
  void output_task(std::uint32_t type, pid_t pid, pid_t ppid, pid_t tid, pid_t ptid, pid_t of);
  template <class Wants, class Body>
  void for_each_sideband(pid_t tid, Wants&& wants, Body&& body);

  std::mutex mutex_;
  GracePeriod grace_;
  ThrottleConfig throttle_;
  EngineLimits limits_;
  std::unordered_map<int, std::unique_ptr<Event>> events_;
  std::vector<std::unique_ptr<Event>> closed_referenced_;  // closed fds still held by a map
  std::vector<std::unique_ptr<Event>> inherited_;          // clones made by inherit_task
  static inline std::atomic<int> inherit_events_{0};
  HandlerResolver* handler_resolver_ = nullptr;
  std::vector<std::unique_ptr<Buffer>> buffers_;
  std::vector<Mapping> mappings_;
  std::unordered_map<int, Pmu*> pmus_;
  int next_dynamic_type_ = PERF_TYPE_MAX;
  std::uint64_t next_id_ = 1;
};

}  // namespace userperf::core
