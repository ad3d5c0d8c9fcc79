// Engine's ioctl surface (the kernel's _perf_ioctl): enable, disable, refresh, reset, period, id,
// SET_OUTPUT, SET_BPF, PAUSE_OUTPUT and the rest, and output redirection, which perf_event_open's
// PERF_FLAG_FD_OUTPUT and close share with SET_OUTPUT.
#include <fcntl.h>

#include <algorithm>
#include <cstdint>
#include <memory>

#include "core/engine.hpp"
#include "support/user_memory.hpp"

namespace userperf::core {

namespace {

constexpr unsigned long kIocFlagGroup = PERF_IOC_FLAG_GROUP;

// The clock an event's records use, compared by SET_OUTPUT ("mixing clocks in one buffer").
int event_clock(const Event& e) {
  return e.attr.use_clockid ? e.attr.clockid : -1;
}

}  // namespace

// PERF_EVENT_IOC_SET_BPF (perf_event_set_bpf_handler): a program descriptor the resolver knows,
// one program per event, and the program's own conditions (can_attach).
int Engine::set_bpf(Event& event, unsigned long prog_fd) {
  if (prog_fd > static_cast<unsigned long>(INT32_MAX)) return -EBADF;
  std::shared_ptr<OverflowHandler> handler;
  if (handler_resolver_ != nullptr) {
    if (const int err = handler_resolver_->resolve_handler(static_cast<int>(prog_fd), handler);
        err != 0) {
      return err;
    }
  } else {
    // A descriptor, but no program runtime: not a BPF program.
    return fcntl(static_cast<int>(prog_fd), F_GETFD) >= 0 ? -EINVAL : -EBADF;
  }
  if (event.handler.load(std::memory_order_relaxed) != nullptr) return -EEXIST;
  if (const int rc = handler->can_attach(event); rc != 0) return rc;
  event.handler_owner = handler;
  event.handler.store(handler.get(), std::memory_order_release);
  return 0;
}

void Engine::detach_output(Event& event) {
  Buffer* buffer = event.buffer;
  if (buffer == nullptr) return;
  // An AUX source leaving the buffer lets go of any handle on its area first.
  if (buffer->aux != nullptr && event.pmu->has_aux()) event.pmu->free_aux(event);
  event.rb.store(nullptr, std::memory_order_release);
  event.buffer = nullptr;
  std::erase(buffer->events, &event);
  if (buffer->owner == &event) buffer->owner = nullptr;
}

// ---- output redirection ----------------------------------------------------------------------

// perf_event_set_output's checks, in the kernel's order; target nullptr detaches.
int Engine::check_output(const Event& event, const Event& target) const {
  if (&target == &event) return -EINVAL;
  if (target.cpu != event.cpu) return -EINVAL;
  if (target.cpu == -1 && target.pid != event.pid) return -EINVAL;
  if (event_clock(target) != event_clock(event)) return -EINVAL;
  if (target.attr.write_backward != event.attr.write_backward) return -EINVAL;
  if (event.own_mappings != 0) return -EINVAL;
  if (target.buffer == nullptr || target.buffer->mappings == 0) return -EINVAL;
  return 0;
}

int Engine::set_output(Event& event, Event* target) {
  if (target != nullptr) {
    if (const int err = check_output(event, *target); err != 0) return err;
  } else if (event.own_mappings != 0) {
    return -EINVAL;
  }
  Buffer* buffer = target != nullptr ? target->buffer : nullptr;
  detach_output(event);
  if (buffer != nullptr) {
    event.buffer = buffer;
    buffer->events.push_back(&event);
    // A deferred ring's events get it when its memory is made (materialize_ring).
    if (buffer->ring->materialized()) {
      event.rb.store(buffer->ring.get(), std::memory_order_release);
    }
  }
  return 0;
}

// ---- ioctl -----------------------------------------------------------------------------------

void Engine::reset(Event& event) {
  event.pmu->read(event);
  event.count.store(0);
  update_user_page(event);
}

// perf_event_for_each / perf_event_for_each_child: an original and its clones alike.
int Engine::apply(Event& event, unsigned long arg, void (Engine::*fn)(Event&)) {
  if (arg & ~kIocFlagGroup) return -EINVAL;
  auto with_children = [this, fn](Event& e) {
    (this->*fn)(e);
    for (Event* child : e.children) (this->*fn)(*child);
  };
  if (arg & kIocFlagGroup) {
    Event& leader = *event.leader.load();
    with_children(leader);
    for (Event* sibling : leader.siblings) with_children(*sibling);
  } else {
    with_children(event);
  }
  return 0;
}

int Engine::ioctl(int fd, unsigned long request, unsigned long arg) {
  std::lock_guard lock(mutex_);
  Event* ev = lookup(fd);
  if (ev == nullptr) return -EBADF;
  Event& event = *ev;
  switch (request) {
    case PERF_EVENT_IOC_ENABLE:
      return apply(event, arg, &Engine::enable);
    case PERF_EVENT_IOC_DISABLE:
      return apply(event, arg, &Engine::disable);
    case PERF_EVENT_IOC_RESET:
      return apply(event, arg, &Engine::reset);
    case PERF_EVENT_IOC_REFRESH: {
      // _perf_event_refresh: sampling, non-inherited events only; adds to the limit and enables.
      const auto refresh = static_cast<int>(arg);
      if (event.attr.inherit || event.attr.sample_period == 0 || refresh <= 0) return -EINVAL;
      event.event_limit.fetch_add(refresh);
      enable(event);
      return 0;
    }
    case PERF_EVENT_IOC_PERIOD: {
      std::uint64_t value = 0;
      if (!support::read_user(reinterpret_cast<const void*>(arg), &value, sizeof value))
        return -EFAULT;
      return set_period(event, value);
    }
    case PERF_EVENT_IOC_ID: {
      const std::uint64_t id = event.primary_id.load();
      if (!support::write_user(reinterpret_cast<void*>(arg), &id, sizeof id)) return -EFAULT;
      return 0;
    }
    case PERF_EVENT_IOC_SET_OUTPUT: {
      // The argument is a long: (int)-1 arrives as 0xffffffff and is no descriptor (EBADF).
      if (arg == ~0UL) return set_output(event, nullptr);
      if (arg > static_cast<unsigned long>(INT32_MAX)) return -EBADF;
      Event* target = lookup(static_cast<int>(arg));
      if (target == nullptr) return -EBADF;
      return set_output(event, target);
    }
    case PERF_EVENT_IOC_PAUSE_OUTPUT: {
      // By value; needs a buffer with data pages.
      if (event.buffer == nullptr || event.buffer->ring->data_size() == 0) return -EINVAL;
      event.buffer->ring->set_paused(arg != 0);
      return 0;
    }
    case PERF_EVENT_IOC_SET_BPF:
      return set_bpf(event, arg);
    case PERF_EVENT_IOC_SET_FILTER:
    case PERF_EVENT_IOC_MODIFY_ATTRIBUTES:
    case PERF_EVENT_IOC_QUERY_BPF:
      return -EINVAL;
    default:
      return -ENOTTY;
  }
}

// perf_event_period: the new value must be non-zero; in frequency mode it is a frequency bounded
// by the maximum sample rate, otherwise a period below 2^63. The kernel rewrites attr with the
// event stopped on its CPU; here a signal handler may be reading, so the value goes to the live
// fields (event.hpp) and attr stays what open was given.
int Engine::set_period(Event& event, std::uint64_t value) {
  if (event.attr.sample_period == 0) return -EINVAL;  // not a sampling event
  if (value == 0) return -EINVAL;
  if (event.attr.freq) {
    if (value > limits_.max_sample_rate) return -EINVAL;
    event.sample_freq.store(value);
  } else {
    if (value & (1ULL << 63)) return -EINVAL;
    event.sample_period.store(value);
    event.period_left.store(static_cast<std::int64_t>(value));
  }
  event.pmu->period_changed(event);
  return 0;
}

}  // namespace userperf::core
