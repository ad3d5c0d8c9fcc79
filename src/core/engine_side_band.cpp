// Engine's side-band records: what the engine writes besides samples when its users report task and
// mapping changes and symbols (COMM, MMAP2, FORK, EXIT, KSYMBOL: the kernel's perf_event_comm,
// perf_event_mmap, perf_event_task and perf_event_ksymbol), and ITRACE_START before a trace begins
// (perf_log_itrace_start). The records of the write path (LOST, THROTTLE) are the overflow's.
#include "core/engine.hpp"

#include <sched.h>

#include <algorithm>
#include <cstring>

#include "abi/sample_layout.hpp"
#include "core/sample_output.hpp"
#include "support/task_ids.hpp"

namespace userperf::core {

// ---- side-band records -----------------------------------------------------------------------

template <class Wants, class Body>
void Engine::for_each_sideband(pid_t tid, Wants&& wants, Body&& body) {
  std::lock_guard lock(mutex_);
  OutputGuard guard(grace_);
  for (auto& [fd, ev] : events_) {
    if (ev->state.load() != EventState::kActive || !wants(ev->attr)) continue;
    if (ev->pid != -1 && tid != -1 && ev->pid != tid) continue;
    body(*ev);
  }
  // Inherited events: those of the thread `tid` (an EXIT record goes to the exiting thread's).
  for (auto& ev : inherited_) {
    if (ev->state.load() != EventState::kActive || !wants(ev->attr)) continue;
    if (tid != -1 && ev->pid != tid) continue;
    body(*ev);
  }
}

namespace {

// A record body with a trailing NUL-terminated string, padded to 8 by output_sideband.
template <class Fixed>
struct WithString {
  Fixed fixed;
  char text[4096];
  std::uint32_t size(const char* s) {
    const std::size_t n = std::min(std::strlen(s), sizeof text - 1);
    const std::size_t padded = abi::align8(n + 1);  // <= sizeof text, a multiple of 8
    std::memcpy(text, s, n);
    std::memset(text + n, 0, padded - n);
    return static_cast<std::uint32_t>(sizeof(Fixed) + padded);
  }
};

SampleId context_id(const Event& event, pid_t pid, pid_t tid) {
  return SampleId{static_cast<std::uint32_t>(pid), static_cast<std::uint32_t>(tid),
                  event.clock_now(), static_cast<std::uint32_t>(sched_getcpu())};
}

}  // namespace

void Engine::comm(pid_t pid, pid_t tid, const char* name, bool exec) {
  struct Fixed {
    std::uint32_t pid, tid;
  };
  WithString<Fixed> body{{static_cast<std::uint32_t>(pid), static_cast<std::uint32_t>(tid)}, {}};
  const std::uint32_t size = body.size(name);
  for_each_sideband(
      tid, [](const perf_event_attr& a) { return a.comm != 0; },
      [&](Event& ev) {
        const std::uint16_t misc = exec && ev.attr.comm_exec ? PERF_RECORD_MISC_COMM_EXEC : 0;
        output_sideband(ev, PERF_RECORD_COMM, misc, &body, size, context_id(ev, pid, tid));
      });
}

void Engine::mmap2(pid_t pid, pid_t tid, std::uint64_t addr, std::uint64_t len, std::uint64_t pgoff,
                   std::uint32_t maj, std::uint32_t min, std::uint64_t ino, std::uint32_t prot,
                   std::uint32_t flags, const char* filename, bool exec) {
  struct Fixed {
    std::uint32_t pid, tid;
    std::uint64_t addr, len, pgoff;
    std::uint32_t maj, min;
    std::uint64_t ino, ino_generation;
    std::uint32_t prot, flags;
  };
  WithString<Fixed> body{{static_cast<std::uint32_t>(pid), static_cast<std::uint32_t>(tid), addr,
                          len, pgoff, maj, min, ino, 0, prot, flags},
                         {}};
  const std::uint32_t size = body.size(filename);
  const std::uint16_t misc =
      static_cast<std::uint16_t>(PERF_RECORD_MISC_USER | (exec ? 0 : PERF_RECORD_MISC_MMAP_DATA));
  for_each_sideband(
      tid,
      [exec](const perf_event_attr& a) {
        return a.mmap2 != 0 && (exec ? a.mmap : a.mmap_data) != 0;
      },
      [&](Event& ev) {
        output_sideband(ev, PERF_RECORD_MMAP2, misc, &body, size, context_id(ev, pid, tid));
      });
}

namespace {
struct TaskRecord {
  std::uint32_t pid, ppid, tid, ptid;
  std::uint64_t time;
};
}  // namespace

void Engine::output_task(std::uint32_t type, pid_t pid, pid_t ppid, pid_t tid, pid_t ptid,
                         pid_t of) {
  for_each_sideband(
      of, [](const perf_event_attr& a) { return a.task || a.comm || a.mmap || a.mmap2; },
      [&](Event& ev) {
        const SampleId id = context_id(ev, pid, tid);
        const TaskRecord body{static_cast<std::uint32_t>(pid), static_cast<std::uint32_t>(ppid),
                              static_cast<std::uint32_t>(tid), static_cast<std::uint32_t>(ptid),
                              id.time};
        output_sideband(ev, type, 0, &body, sizeof body, id);
      });
}

void Engine::fork(pid_t pid, pid_t ppid, pid_t tid, pid_t ptid) {
  output_task(PERF_RECORD_FORK, pid, ppid, tid, ptid, ptid);
}

void Engine::exit(pid_t pid, pid_t ppid, pid_t tid, pid_t ptid) {
  output_task(PERF_RECORD_EXIT, pid, ppid, tid, ptid, tid);
  std::lock_guard lock(mutex_);
  for (auto& [fd, ev] : events_) {
    if (ev->pid == tid) {
      ev->task_exited.store(true);
      if (ev->buffer != nullptr) ev->buffer->ring->wake_now();
    }
  }
}

void Engine::ksymbol(std::uint64_t addr, std::uint32_t len, std::uint16_t ksym_type,
                     std::uint16_t flags, const char* name) {
  struct Fixed {
    std::uint64_t addr;
    std::uint32_t len;
    std::uint16_t ksym_type, flags;
  };
  WithString<Fixed> body{{addr, len, ksym_type, flags}, {}};
  const std::uint32_t size = body.size(name);
  for_each_sideband(
      -1, [](const perf_event_attr& a) { return a.ksymbol != 0; },
      [&](Event& ev) {
        output_sideband(ev, PERF_RECORD_KSYMBOL, PERF_RECORD_MISC_KERNEL, &body, size,
                        context_id(ev, support::current_pid(), support::current_tid()));
      });
}

// perf_log_itrace_start: before a tracing PMU's event runs, tell the decoder whose trace follows.
// Logged until the trace really starts, that is until the event's buffer has an AUX area.
void Engine::log_itrace_start(Event& event) {
  if (event.itrace_started.load()) return;
  if (event.aux_area() == nullptr) return;
  const pid_t tid = event.pid != -1 ? event.pid : support::current_tid();
  const struct {
    std::uint32_t pid, tid;
  } body{static_cast<std::uint32_t>(support::current_pid()), static_cast<std::uint32_t>(tid)};
  OutputGuard guard(grace_);
  output_sideband(
      event, PERF_RECORD_ITRACE_START, 0, &body, sizeof body,
      SampleId{body.pid, body.tid, event.clock_now(), static_cast<std::uint32_t>(sched_getcpu())});
  event.itrace_started.store(true);
}

}  // namespace userperf::core
