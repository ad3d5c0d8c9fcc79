// Engine's inheritance (attr.inherit): a new thread gets clones of its creator's inheriting events
// and groups (the kernel's perf_event_init_task, inherit_group, inherit_event), and a thread's end
// folds its clones' counts and times into their originals (perf_event_exit_task, sync_child_event),
// with the PERF_RECORD_READ inherit_stat asks for.
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "core/engine.hpp"
#include "core/read_values.hpp"
#include "core/sample_output.hpp"

namespace userperf::core {

namespace {

// perf_event_read_event: a clone's PERF_RECORD_READ at its thread's exit (attr.inherit_stat), in
// its original's ring: pid and tid of the ending thread, the clone's own values in the event's
// read_format (its group's, under PERF_FORMAT_GROUP), then the sample_id trailer.
void output_exit_read(Event& clone, pid_t tid, std::uint64_t now) {
  const bool group = (clone.attr.read_format & PERF_FORMAT_GROUP) != 0;
  const std::uint32_t members = group ? clone.leader.load()->nr_members.load() : 1;
  ReadValuesBuffer body;
  body.put(static_cast<std::uint64_t>(static_cast<std::uint32_t>(getpid())) |
           (static_cast<std::uint64_t>(static_cast<std::uint32_t>(tid)) << 32));
  emit_read_values(body, clone, now, members);
  const SampleId id{static_cast<std::uint32_t>(getpid()), static_cast<std::uint32_t>(tid), now,
                    static_cast<std::uint32_t>(sched_getcpu())};
  output_sideband(clone, PERF_RECORD_READ, 0, body.words.data(),
                  static_cast<std::uint32_t>(body.words.size() * sizeof(std::uint64_t)), id);
}

}  // namespace

// inherit_event: a clone of `from`'s original for thread `child`, in `leader`'s group (nullptr: a
// leader itself). nullptr when the PMU cannot follow the thread.
Event* Engine::inherit_event(Event& from, pid_t child, Event* leader) {
  Event& origin = from.parent != nullptr ? *from.parent : from;
  auto event = std::make_unique<Event>();
  event->attr = origin.attr;
  event->pid = child;
  event->cpu = origin.cpu;
  event->pmu = origin.pmu;
  event->parent = &origin;
  if (event->pmu->event_init(*event) != 0 || event->pmu->event_bind(*event) != 0) return nullptr;
  event->id = next_id_++;
  event->primary_id.store(origin.primary_id.load());
  event->header_size = origin.header_size;
  event->id_header_size = origin.id_header_size;
  event->plan = origin.plan;
  event->sample_period.store(origin.sample_period.load());
  event->period_left.store(static_cast<std::int64_t>(event->sample_period.load()));
  event->sample_freq.store(origin.sample_freq.load());
  // The kernel's clone keeps its parent's overflow handler (a BPF program).
  event->handler_owner = origin.handler_owner;
  event->handler.store(origin.handler.load(), std::memory_order_release);
  Event* ev = event.get();
  if (ev->attr.aux_sample_size != 0) ev->aux_event.store(leader, std::memory_order_release);
  if (leader != nullptr) leader->attach_sibling(*ev);
  origin.children.push_back(ev);
  inherited_.push_back(std::move(event));
  // An enabled original's clone starts enabled (INACTIVE, then scheduled), a disabled one's off.
  if (origin.state.load() >= EventState::kInactive) {
    const std::uint64_t now = ev->clock_now();
    ev->state.store(EventState::kInactive);
    ev->enabled_since.store(now);
    schedule(*ev, now);
  }
  return ev;
}

void Engine::inherit_task(pid_t parent, pid_t child) {
  std::lock_guard lock(mutex_);
  std::vector<Event*> leaders;
  for (auto& [fd, ev] : events_) {
    if (ev->pid == parent && ev->attr.inherit && ev->is_leader()) leaders.push_back(ev.get());
  }
  for (auto& ev : inherited_) {
    if (ev->pid == parent && ev->is_leader()) leaders.push_back(ev.get());
  }
  // inherit_group: the leader, then its siblings into the clone's group.
  for (Event* leader : leaders) {
    Event* clone = inherit_event(*leader, child, nullptr);
    if (clone == nullptr) continue;
    for (Event* sibling : std::vector<Event*>(leader->siblings)) {
      inherit_event(*sibling, child, clone);
    }
  }
}

void Engine::exit_task(pid_t tid) {
  std::vector<std::unique_ptr<Event>> gone;
  {
    std::lock_guard lock(mutex_);
    std::vector<Event*> clones;
    for (auto& ev : inherited_) {
      if (ev->pid == tid) clones.push_back(ev.get());
    }
    // perf_event_exit_event: scheduled out, then sync_child_event.
    for (Event* c : clones) {
      c->pmu->read(*c);
      if (c->state.load() == EventState::kActive) {
        c->pmu->del(*c);
        const std::uint64_t now = c->clock_now();
        c->total_running.fetch_add(now - c->running_since.load());
        c->state.store(EventState::kInactive);
      }
    }
    for (Event* c : clones) {
      const std::uint64_t now = c->clock_now();
      std::uint64_t enabled = 0;
      std::uint64_t running = 0;
      c->read_times(now, enabled, running);
      c->total_enabled.store(enabled);
      c->total_running.store(running);
      c->state.store(EventState::kOff);
      // sync_child_event: the clone's READ record before its count joins the original's. (The
      // kernel skips it when its exit path has already cut the context from the task, a race
      // 6.18 loses in some runs; the record is what inherit_stat asks for.)
      if (c->attr.inherit_stat) output_exit_read(*c, tid, now);
      c->parent->child_count.fetch_add(c->count.load());
      c->parent->child_total_enabled.fetch_add(enabled);
      c->parent->child_total_running.fetch_add(running);
    }
    // Siblings first: a leader's release would make them leaders of their own.
    std::stable_partition(clones.begin(), clones.end(), [](Event* c) { return !c->is_leader(); });
    for (Event* c : clones) gone.push_back(release_event(*c));
  }
}

std::vector<Event*> Engine::inherited_events(pid_t tid) {
  std::lock_guard lock(mutex_);
  std::vector<Event*> out;
  for (auto& ev : inherited_) {
    if (ev->pid == tid) out.push_back(ev.get());
  }
  return out;
}

}  // namespace userperf::core
