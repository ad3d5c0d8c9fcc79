// Event: one perf event (the kernel's struct perf_event). Fields read on the write path are
// atomics or immutable after open; everything else is guarded by the engine lock.
#pragma once

#include <linux/perf_event.h>
#include <sys/types.h>
#include <time.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/sample_plan.hpp"
#include "ring/data_ring.hpp"
#include "support/tsc_clock.hpp"

namespace userperf::core {

class Pmu;
class OverflowHandler;
struct Buffer;

enum class EventState : int { kError = -2, kOff = -1, kInactive = 0, kActive = 1 };

struct Event {
  // Immutable after open (a PMU's event_init may still adjust it while open runs). What changes
  // later lives beside it: the period and frequency in effect are sample_period and sample_freq.
  perf_event_attr attr{};
  std::uint64_t id = 0;
  // What its records name it by (the kernel's primary_event_id): its own id, or for an event that
  // stands for one of a parent process (Engine::inherit_id) that event's, as the kernel's inherited
  // events report their parent's. STREAM_ID and LOST records keep `id`. Atomic: the recorder's
  // agent sets it on the event's own thread before its first record (a signal handler), where the
  // control path may read it.
  std::atomic<std::uint64_t> primary_id{0};
  int fd = -1;
  Pmu* pmu = nullptr;
  pid_t pid = -1;  // target thread, or -1 for every thread on `cpu`
  int cpu = -1;
  std::uint16_t header_size = 0;     // fixed sample body bytes except READ (sized per sample)
  std::uint16_t id_header_size = 0;  // sample_id bytes
  SamplePlan plan;                   // the sample's layout (sample_plan.hpp)

  // Group membership. The vector is the engine's (engine lock); the write path walks the atomic
  // list leader -> first_sibling -> next_sibling... (entries stay valid: events are freed only
  // after an output grace period).
  std::atomic<Event*> leader{this};
  std::vector<Event*> siblings;
  std::atomic<Event*> first_sibling{nullptr};
  std::atomic<Event*> next_sibling{nullptr};

  // Shared with the write path.
  std::atomic<EventState> state{EventState::kOff};
  std::atomic<std::uint64_t> count{0};
  std::atomic<std::int64_t> period_left{0};
  // The period in effect (the kernel's hwc->sample_period): set by open, PERF_EVENT_IOC_PERIOD
  // and, in frequency mode, the overflow path's adaptation.
  std::atomic<std::uint64_t> sample_period{0};
  // Frequency mode: the rate the adaptation aims at (attr.sample_freq at open, then what
  // PERF_EVENT_IOC_PERIOD sets). Read by the overflow path.
  std::atomic<std::uint64_t> sample_freq{0};
  std::atomic<std::uint64_t> lost_samples{0};
  std::atomic<int> event_limit{0};                 // PERF_EVENT_IOC_REFRESH countdown, 0 = none
  std::atomic<ring::DataRing*> rb{nullptr};        // output buffer (own or redirected)
  std::atomic<OverflowHandler*> handler{nullptr};  // PERF_EVENT_IOC_SET_BPF

  // Throttling (write path): overflows in the current tick and whether the event is stopped.
  std::atomic<std::uint64_t> tick_start{0};  // ns at which the current tick began
  std::atomic<std::uint32_t> tick_interrupts{0};
  std::atomic<bool> throttled{false};
  // Frequency mode: when the last overflow happened and the count at that time.
  std::atomic<std::uint64_t> freq_stamp{0};
  std::atomic<std::uint64_t> freq_count{0};

  // Time accounting: written under the engine lock, read by the write path (read_times()).
  std::atomic<std::uint64_t> total_enabled{0};  // up to the last state change
  std::atomic<std::uint64_t> total_running{0};
  std::atomic<std::uint64_t> enabled_since{0};  // valid while state >= kInactive
  std::atomic<std::uint64_t> running_since{0};  // valid while state == kActive
  std::atomic<bool> task_exited{false};

  // Mapping state (engine lock).
  Buffer* buffer = nullptr;  // the buffer rb points into
  int own_mappings = 0;      // live mmaps of this event itself

  std::uint64_t pmu_private = 0;  // for the PMU's own use

  // AUX sampling (PERF_SAMPLE_AUX with aux_sample_size): the group leader whose trace each sample
  // carries (the kernel's event->aux_event). Set at open; cleared, with the event put into the
  // ERROR state, when the leader goes away.
  std::atomic<Event*> aux_event{nullptr};
  // ITRACE_START was logged (the kernel's PERF_ATTACH_ITRACE, set by perf_event_itrace_started).
  std::atomic<bool> itrace_started{false};

  // Engine lock: keeps `handler` alive until the event is freed.
  std::shared_ptr<OverflowHandler> handler_owner;
  // Engine lock: references held outside the descriptor (a BPF_MAP_TYPE_PERF_EVENT_ARRAY slot,
  // as the kernel's map holds the event's file). close() of a referenced event defers its
  // release to the last Engine::put_event.
  int external_refs = 0;
  bool fd_closed = false;

  std::atomic<std::uint32_t> nr_members{1};  // on a leader: itself and its siblings

  // Inheritance (attr.inherit, Engine::inherit_task). On an event cloned into a thread created
  // after its original was opened: `parent`, the original (never a clone: grandchildren link back
  // to it, as the kernel's inherit_event does); it writes into the parent's ring and has no
  // descriptor. Immutable after the clone. On an original: its live clones (engine lock) and what
  // the exited ones counted (the kernel's child_count, child_total_time_enabled/running).
  Event* parent = nullptr;
  std::vector<Event*> children;
  std::atomic<std::uint64_t> child_count{0};
  std::atomic<std::uint64_t> child_total_enabled{0};
  std::atomic<std::uint64_t> child_total_running{0};

  bool is_leader() const { return leader.load(std::memory_order_relaxed) == this; }
  // perf_group_attach: `sibling` joins this leader's group, last (engine lock held). The write
  // path's list gets it after its leader pointer is set.
  void attach_sibling(Event& sibling);
  // The AUX area of the buffer the event writes into, nullptr when it has none. The pointer stays
  // valid inside an OutputGuard (an area is freed after a grace period).
  ring::AuxRing* aux_area() const {
    ring::DataRing* ring = output_ring();
    return ring != nullptr ? ring->aux() : nullptr;
  }
  // The ring its records go to: its own, or an inherited event's parent's (perf_output_begin).
  ring::DataRing* output_ring() const {
    return (parent != nullptr ? parent : this)->rb.load(std::memory_order_acquire);
  }
  // The event's clock (attr.clockid or CLOCK_MONOTONIC). Inline: it is on every record's path.
  std::uint64_t clock_now() const {
    if (uses_tsc_clock()) return support::tsc_now();
    return support::clock_gettime_ns(static_cast<clockid_t>(attr.clockid));
  }
  // The event's clock is CLOCK_MONOTONIC (the default, or use_clockid with it): clock_now() reads
  // support::tsc_now(), and the control page may publish the TSC conversion.
  bool uses_tsc_clock() const { return !attr.use_clockid || attr.clockid == CLOCK_MONOTONIC; }
  // time_enabled / time_running up to `now`.
  void read_times(std::uint64_t now, std::uint64_t& enabled, std::uint64_t& running) const;
};

// A program that decides, per overflow, whether the sample is written (the BPF hook).
class OverflowHandler {
 public:
  virtual ~OverflowHandler() = default;
  // Returns false to drop the sample and its side effects. Signal-safe.
  virtual bool on_overflow(Event& event, const struct SampleData& data) = 0;
  // Whether the handler may run for `event` (0 or -errno), asked by PERF_EVENT_IOC_SET_BPF.
  virtual int can_attach(const Event& event) const {
    (void)event;
    return 0;
  }
};

// Turns the descriptor given to PERF_EVENT_IOC_SET_BPF into a handler (the kernel's
// bpf_prog_get): 0 with the handler in `out`, -EBADF when fd is no descriptor, -EINVAL when it is
// not a program.
class HandlerResolver {
 public:
  virtual ~HandlerResolver() = default;
  virtual int resolve_handler(int fd, std::shared_ptr<OverflowHandler>& out) = 0;
};

}  // namespace userperf::core
