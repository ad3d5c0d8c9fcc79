// Engine's syscall surface: perf_event_open with its checks, close and the references that outlive
// it, read and poll. ioctl and output redirection (SET_OUTPUT, open's FD_OUTPUT, close's detach)
// are in engine_ioctl.cpp, the event states in engine_sched.cpp, mmap and the buffers behind it in
// engine_mmap.cpp, the side-band records in engine_side_band.cpp, inheritance (a thread's clones of
// its creator's events, and their end) in engine_inherit.cpp.
#include "core/engine.hpp"

#include <signal.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "abi/attr_rules.hpp"
#include "abi/sample_layout.hpp"
#include "core/read_values.hpp"
#include "core/sample_output.hpp"
#include "support/descriptors.hpp"
#include "support/task_ids.hpp"
#include "support/user_memory.hpp"

namespace userperf::core {

namespace {

bool is_thread_of_this_process(pid_t tid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/self/task/%d", tid);
  return access(path, F_OK) == 0;
}

// read(2)'s values (perf_event_read_value, perf_read_group): an event's count and times with what
// its clones count now and what the exited ones counted. Engine lock held.
struct WithChildren {
  std::uint64_t count(const Event& e) const {
    std::uint64_t total = e.count.load(std::memory_order_relaxed) + e.child_count.load();
    for (const Event* child : e.children) total += child->count.load(std::memory_order_relaxed);
    return total;
  }
  void add_times(const Event& e, std::uint64_t now, std::uint64_t& enabled,
                 std::uint64_t& running) const {
    enabled += e.child_total_enabled.load();
    running += e.child_total_running.load();
    for (const Event* child : e.children) {
      std::uint64_t child_enabled = 0;
      std::uint64_t child_running = 0;
      child->read_times(now, child_enabled, child_running);
      enabled += child_enabled;
      running += child_running;
    }
  }
};

}  // namespace

Engine::Engine() = default;

Engine::~Engine() {
  std::vector<int> fds;
  {
    std::lock_guard lock(mutex_);
    for (auto& [fd, ev] : events_) fds.push_back(fd);
  }
  for (int fd : fds) close(fd);
}

int Engine::register_pmu(Pmu& pmu, int type) {
  std::lock_guard lock(mutex_);
  if (type < 0) type = next_dynamic_type_++;
  pmu.type_ = type;
  pmus_[type] = &pmu;
  return type;
}

int Engine::pmu_type(const char* name) {
  std::lock_guard lock(mutex_);
  for (auto& [type, pmu] : pmus_) {
    if (std::strcmp(pmu->name(), name) == 0) return type;
  }
  return -ENOENT;
}

void Engine::set_limits(const EngineLimits& limits) {
  std::lock_guard lock(mutex_);
  limits_ = limits;
  // DIV_ROUND_UP(max_sample_rate, HZ), as perf_event_max_sample_rate's handler computes it.
  throttle_.max_samples_per_tick.store((limits.max_sample_rate + limits.hz - 1) / limits.hz);
  throttle_.tick_ns = 1'000'000'000u / limits.hz;
}

EngineLimits Engine::limits() {
  std::lock_guard lock(mutex_);
  return limits_;
}

void Engine::set_id_base(std::uint64_t base) {
  std::lock_guard lock(mutex_);
  next_id_ = base + 1;
}

int Engine::inherit_id(int fd, std::uint64_t primary_id) {
  std::lock_guard lock(mutex_);
  Event* event = lookup(fd);
  if (event == nullptr) return -EBADF;
  if (primary_id == 0) return -EINVAL;
  event->primary_id.store(primary_id);
  return 0;
}

Event* Engine::lookup(int fd) {
  const auto it = events_.find(fd);
  return it == events_.end() ? nullptr : it->second.get();
}

bool Engine::is_event(int fd) {
  std::lock_guard lock(mutex_);
  return lookup(fd) != nullptr;
}

Event* Engine::event(int fd) {
  std::lock_guard lock(mutex_);
  return lookup(fd);
}

OverflowResult Engine::overflow(Event& event, SampleData& data, bool throttle) {
  OutputGuard guard(grace_);
  return perf_event_overflow(event, data, throttle_, throttle);
}

// ---- perf_event_open -------------------------------------------------------------------------

int Engine::open(perf_event_attr* uattr, pid_t pid, int cpu, int group_fd, unsigned long flags) {
  std::lock_guard lock(mutex_);
  return open_locked(uattr, pid, cpu, group_fd, flags);
}

int Engine::open_locked(perf_event_attr* uattr, pid_t pid, int cpu, int group_fd,
                        unsigned long flags) {
  // The kernel's order of checks (see abi/attr_rules.hpp): the first failure decides the errno.
  abi::OpenLimits limits = abi::host_limits();
  limits.max_sample_rate = limits_.max_sample_rate;
  limits.max_stack = limits_.max_stack;
  if (const int err = abi::check_flags(flags); err != 0) return err;
  perf_event_attr attr{};
  if (const int err = abi::copy_attr(uattr, attr, limits); err != 0) return err;
  if (const int err = abi::check_open_syscall(attr, pid, cpu, group_fd, flags, limits); err != 0) {
    return err;
  }

  Event* group = nullptr;
  if (group_fd != -1) {
    group = lookup(group_fd);
    if (group == nullptr) return -EBADF;
  }
  Event* output = group != nullptr && (flags & PERF_FLAG_FD_OUTPUT) ? group : nullptr;
  Event* leader = group != nullptr && !(flags & PERF_FLAG_FD_NO_GROUP) ? group : nullptr;

  // With PERF_FLAG_PID_CGROUP, pid is a cgroup directory's descriptor: the event has no task.
  const bool cgroup = (flags & PERF_FLAG_PID_CGROUP) != 0;
  const bool has_task = pid != -1 && !cgroup;
  pid_t target = -1;
  if (has_task) {
    target = pid == 0 ? support::current_tid() : pid;
    // The calling thread itself (the agent opens every thread's events on it) exists.
    if (pid > 0 && pid != support::current_tid() && kill(pid, 0) != 0 && errno == ESRCH)
      return -ESRCH;
    // A task event joins only a group whose leader agrees on inherit.
    if (leader != nullptr && leader->attr.inherit != attr.inherit) return -EINVAL;
  }
  if (const int err = abi::check_event_alloc(attr, cpu, has_task, limits); err != 0) return err;

  const auto pmu_it = pmus_.find(static_cast<int>(attr.type));
  if (pmu_it == pmus_.end()) return -ENOENT;
  auto event = std::make_unique<Event>();
  event->attr = attr;
  event->pid = target;
  event->cpu = cpu;
  event->pmu = pmu_it->second;
  if (const int err = event->pmu->event_init(*event); err != 0) return err;
  // perf_event_alloc's PMU-capability checks for AUX, for every PMU (none has AUX_OUTPUT/PAUSE).
  if (const int err = abi::check_pmu_aux_caps(attr); err != 0) return err;
  // userperf has no cgroup events: refused where the kernel connects the cgroup (after the PMU's
  // init, before the callchain buffers; Linux 6.18), never opened as an event of the caller.
  if (cgroup) return -EOPNOTSUPP;
  if (const int err = abi::get_callchain_buffers(attr, limits); err != 0) return err;
  if (const int err = abi::perf_event_set_clock(attr); err != 0) return err;

  // userperf runs inside the process it observes: other processes' threads are out of reach, as
  // a task the caller may not ptrace is for the kernel.
  if (pid > 0 && pid != support::current_tid() && !is_thread_of_this_process(pid)) return -EACCES;
  if (leader != nullptr) {
    // perf_event_open's group checks: a leader, on the same CPU and task.
    if (!leader->is_leader() || leader->cpu != cpu || leader->pid != target) return -EINVAL;
  }
  if (output != nullptr) {
    if (const int err = check_output(*event, *output); err != 0) return err;
  }
  if (leader != nullptr) {
    std::vector<std::uint64_t> sibling_formats;
    for (const Event* s : leader->siblings) sibling_formats.push_back(s->attr.read_format);
    if (const int err =
            abi::validate_size(attr.read_format, leader->attr.read_format, sibling_formats);
        err != 0) {
      return err;
    }
  }
  if (const int err = check_aux_event(*event, leader); err != 0) return err;
  // Accepted by the kernel's rules but not acted on by userperf yet: refusing beats an event that
  // silently never signals (sigtrap) or never starts (enable_on_exec: exec is not tracked).
  if (attr.sigtrap || attr.enable_on_exec) return -EOPNOTSUPP;
  if (const int err = event->pmu->event_bind(*event); err != 0) return err;
  // From here a failure must give back what event_bind took.
  struct BindGuard {
    Event* event;
    ~BindGuard() {
      if (event != nullptr) event->pmu->destroy(*event);
    }
  } bind_guard{event.get()};

  const int fd = support::place_descriptor(eventfd(0, EFD_CLOEXEC));
  if (fd < 0) return -errno;
  bind_guard.event = nullptr;  // close() destroys it from now on
  event->fd = fd;
  event->id = next_id_++;
  event->primary_id.store(event->id);
  event->header_size = static_cast<std::uint16_t>(abi::sample_header_size(attr.sample_type));
  event->id_header_size = static_cast<std::uint16_t>(abi::id_header_size(attr.sample_type));
  event->plan = plan_sample(attr.sample_type);
  // Frequency mode starts from period 1 and adapts (perf_event_alloc), unless the PMU converted
  // the frequency to a fixed period in event_init.
  const std::uint64_t period = event->attr.freq ? 1 : event->attr.sample_period;
  if (event->sample_period.load() == 0) event->sample_period.store(period);
  event->period_left.store(static_cast<std::int64_t>(event->sample_period.load()));
  if (event->attr.freq) event->sample_freq.store(event->attr.sample_freq);

  Event* ev = event.get();
  if (attr.aux_sample_size != 0) ev->aux_event.store(leader, std::memory_order_release);
  events_.emplace(fd, std::move(event));
  if (leader != nullptr) leader->attach_sibling(*ev);
  if (output != nullptr) set_output(*ev, output);  // checked above by check_output
  if (attr.inherit) inherit_events_.fetch_add(1, std::memory_order_relaxed);
  const std::uint64_t now = ev->clock_now();
  if (!attr.disabled) {
    ev->state.store(EventState::kInactive);
    ev->enabled_since.store(now);
    schedule(*ev, now);
  }
  return fd;
}

// perf_need_aux_event / perf_get_aux_event (after the PMU's aux_output capability check in
// abi::check_pmu_aux_caps): aux_sample_size, aux_pause and aux_resume need a group leader whose PMU
// can snapshot or pause its trace.
int Engine::check_aux_event(Event& event, Event* leader) const {
  const perf_event_attr& attr = event.attr;
  const std::uint32_t action = abi::aux_action(attr);
  const bool pause_resume = (action & (abi::kAuxPause | abi::kAuxResume)) != 0;
  if (!attr.aux_output && attr.aux_sample_size == 0 && !pause_resume) return 0;
  if (leader == nullptr) return -EINVAL;
  if (attr.aux_output && attr.aux_sample_size != 0) return -EINVAL;
  if (attr.aux_output) return -EINVAL;  // no userperf PMU has aux_output_match
  if (pause_resume) return -EINVAL;     // no userperf PMU has PERF_PMU_CAP_AUX_PAUSE
  if (attr.aux_sample_size != 0 && !leader->pmu->has_snapshot_aux()) return -EINVAL;
  return 0;
}

// ---- close -----------------------------------------------------------------------------------

int Engine::close(int fd) {
  std::unique_ptr<Event> owned;
  {
    std::lock_guard lock(mutex_);
    const auto it = events_.find(fd);
    if (it == events_.end()) return -EBADF;
    Event& ev = *it->second;
    if (ev.external_refs > 0) {
      // A map still holds the event: it lives on, as the kernel's file does, until the last
      // put_event; only the descriptor goes now.
      ev.fd_closed = true;
      closed_referenced_.push_back(std::move(it->second));
      events_.erase(it);
    } else {
      owned = release_event(ev);
      events_.erase(it);
    }
  }
  ::close(fd);
  return 0;
}

Event* Engine::get_event(int fd) {
  std::lock_guard lock(mutex_);
  Event* ev = lookup(fd);
  if (ev != nullptr) ++ev->external_refs;
  return ev;
}

void Engine::put_event(Event* event) {
  std::unique_ptr<Event> owned;
  {
    std::lock_guard lock(mutex_);
    if (--event->external_refs > 0 || !event->fd_closed) return;
    const auto it = std::find_if(closed_referenced_.begin(), closed_referenced_.end(),
                                 [event](const auto& e) { return e.get() == event; });
    if (it == closed_referenced_.end()) return;  // not a closed event: nothing to release
    owned = release_event(*event);
    *it = std::move(closed_referenced_.back());
    closed_referenced_.pop_back();
  }
  // Freed outside the lock: the handler it owns may release maps that put other events.
}

void Engine::set_handler_resolver(HandlerResolver* resolver) {
  std::lock_guard lock(mutex_);
  handler_resolver_ = resolver;
}

std::unique_ptr<Event> Engine::release_event(Event& ev) {
  // perf_event_release_kernel: the clones go with their original (siblings before leaders).
  while (!ev.children.empty()) release_event(*ev.children.back());
  if (ev.parent != nullptr) {
    std::erase(ev.parent->children, &ev);
  } else if (ev.attr.inherit) {
    inherit_events_.fetch_sub(1, std::memory_order_relaxed);
  }
  disable(ev);
  ev.state.store(EventState::kOff);
  if (ev.is_leader()) {
    // perf_group_detach: siblings become leaders of their own groups; an AUX sampler whose leader
    // goes loses it and goes into the ERROR state (perf_put_aux_event).
    for (Event* sibling : ev.siblings) {
      if (sibling->aux_event.load() == &ev) {
        sibling->aux_event.store(nullptr, std::memory_order_release);
        if (sibling->state.load() == EventState::kActive) sibling->pmu->del(*sibling);
        sibling->state.store(EventState::kError, std::memory_order_release);
      }
      sibling->leader.store(sibling);
      sibling->next_sibling.store(nullptr);
      schedule(*sibling, sibling->clock_now());
    }
    ev.siblings.clear();
    ev.first_sibling.store(nullptr);
  } else {
    Event& leader = *ev.leader.load();
    auto& list = leader.siblings;
    const auto pos = std::find(list.begin(), list.end(), &ev);
    Event* next = ev.next_sibling.load();
    if (pos == list.begin()) {
      leader.first_sibling.store(next);
    } else {
      (*(pos - 1))->next_sibling.store(next);
    }
    list.erase(pos);
    leader.nr_members.fetch_sub(1);
  }
  // A deferred ring (defer_ring) lives as long as its owner.
  Buffer* held =
      ev.buffer != nullptr && ev.buffer->deferred && ev.buffer->owner == &ev ? ev.buffer : nullptr;
  detach_output(ev);
  if (held != nullptr && --held->mappings == 0) release_buffer(held);
  for (Mapping& m : mappings_) {
    if (m.event == &ev) m.event = nullptr;
  }
  std::unique_ptr<Event> owned;
  if (ev.parent != nullptr) {
    const auto it = std::find_if(inherited_.begin(), inherited_.end(),
                                 [&ev](const auto& e) { return e.get() == &ev; });
    owned = std::move(*it);
    *it = std::move(inherited_.back());
    inherited_.pop_back();
  } else if (const auto it = events_.find(ev.fd); it != events_.end() && it->second.get() == &ev) {
    owned = std::move(it->second);
  } else {
    for (auto& e : closed_referenced_) {
      if (e.get() == &ev) owned = std::move(e);
    }
  }
  // Writers that loaded this event or its buffer leave before it is freed.
  grace_.synchronize();
  owned->pmu->destroy(*owned);
  return owned;
}

// ---- read ------------------------------------------------------------------------------------

ssize_t Engine::read(int fd, void* buf, std::size_t count) {
  std::lock_guard lock(mutex_);
  Event* ev = lookup(fd);
  if (ev == nullptr) return -EBADF;
  if (ev->state.load() == EventState::kError) return 0;
  const bool group = (ev->attr.read_format & PERF_FORMAT_GROUP) != 0;
  Event& leader = *ev->leader.load();
  const std::uint32_t members = group ? leader.nr_members.load() : 1;
  const std::size_t size = abi::read_format_size(ev->attr.read_format, members);
  if (count < size) return -ENOSPC;
  auto read_with_children = [](Event& e) {
    e.pmu->read(e);
    for (Event* child : e.children) child->pmu->read(*child);
  };
  if (group) {
    read_with_children(leader);
    for (Event* s : leader.siblings) read_with_children(*s);
  } else {
    read_with_children(*ev);
  }
  ReadValuesBuffer sink;
  emit_read_values(sink, *ev, ev->clock_now(), members, WithChildren{});
  if (!support::write_user(buf, sink.words.data(), size)) return -EFAULT;
  return static_cast<ssize_t>(size);
}

// ---- poll ------------------------------------------------------------------------------------

// perf_poll: POLLHUP without a buffer or once the task exited; otherwise the wakeups since the last
// poll (reported once).
short Engine::poll_event(Event& event) {
  if (event.task_exited.load()) return POLLHUP;
  if (event.buffer == nullptr) return POLLHUP;
  return event.buffer->ring->take_wakeup() ? static_cast<short>(POLLIN | POLLRDNORM) : 0;
}

int Engine::poll(pollfd* fds, nfds_t nfds, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::vector<pollfd> wait_set;
  std::vector<nfds_t> origin;
  for (;;) {
    int ready = 0;
    wait_set.clear();
    origin.clear();
    {
      std::lock_guard lock(mutex_);
      for (nfds_t i = 0; i < nfds; ++i) {
        fds[i].revents = 0;
        if (Event* ev = lookup(fds[i].fd)) {
          fds[i].revents =
              static_cast<short>(poll_event(*ev) & (fds[i].events | POLLHUP | POLLERR));
          if (fds[i].revents != 0) ++ready;
          if (ev->buffer != nullptr) {
            wait_set.push_back({ev->buffer->ring->wakeup_fd(), POLLIN, 0});
            origin.push_back(nfds);  // a wakeup channel: re-evaluate, do not report directly
          }
        } else if (fds[i].fd >= 0) {
          wait_set.push_back({fds[i].fd, fds[i].events, 0});
          origin.push_back(i);
        }
      }
    }
    int wait_ms = 0;
    if (ready == 0 && timeout_ms != 0) {
      if (timeout_ms < 0) {
        wait_ms = -1;
      } else {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        wait_ms = static_cast<int>(std::max<long long>(0, left.count()));
      }
    }
    const int n = ::poll(wait_set.data(), wait_set.size(), wait_ms);
    if (n < 0) return -errno;
    bool woke = false;
    for (std::size_t k = 0; k < wait_set.size(); ++k) {
      if (wait_set[k].revents == 0) continue;
      if (origin[k] == nfds) {
        woke = true;  // a wakeup channel: loop to re-evaluate the events
      } else {
        fds[origin[k]].revents = wait_set[k].revents;
        ++ready;
      }
    }
    if (ready > 0 || wait_ms == 0 || !woke) return ready;
  }
}

}  // namespace userperf::core
