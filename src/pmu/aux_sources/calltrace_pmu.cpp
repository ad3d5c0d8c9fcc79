// SIGNAL-SAFE from CalltracePmu::record down.
#include "pmu/aux_sources/calltrace_pmu.hpp"

#include <pthread.h>

#include <atomic>
#include <cerrno>

#include "pmu/aux_sources/source_table.hpp"
#include "support/fork_sequence.hpp"
#include "support/task_ids.hpp"
#include "trace/calltrace_format.hpp"

namespace userperf::pmu {

namespace {

struct CalltraceSource final : core::AuxSourcePmu::Source {
  CalltraceSource(core::Event& ev, core::GracePeriod& grace) : Source(ev, grace), tid(ev.pid) {}
  const pid_t tid;
  trace::CalltraceEncoder encoder;  // the traced thread's only
  std::atomic<std::uint64_t> recorded{0};
  std::atomic<std::uint64_t> nested{0};
};

constexpr std::size_t kMaxThreads = 256;
constinit SourceTable<CalltraceSource, kMaxThreads> g_sources;

// Bumped whenever a source is published or unpublished: a thread's cached lookup is valid while
// its generation is current. Starts equal to the cache's initial value, so threads do nothing at
// all until the first calltrace event exists.
constinit std::atomic<std::uint64_t> g_generation{0};

struct ThreadCache {
  std::uint64_t generation;
  CalltraceSource* source;  // this thread's source as of `generation`
  bool busy;                // a hook of this thread is running (a signal may nest in it)
};
__attribute__((tls_model("initial-exec"))) constinit thread_local ThreadCache t_cache{0, nullptr,
                                                                                      false};

void bump_generation() {
  g_generation.fetch_add(1, std::memory_order_seq_cst);
}

// A fork child's thread has a new id: its cached lookup is stale. Only the thread's own cache is
// written (in the static TLS block fork has already copied), not the shared generation.
void forget_thread_cache() {
  t_cache.generation = ~std::uint64_t{0};
  t_cache.source = nullptr;
}
[[maybe_unused]] const bool g_fork_hooks =
    (support::set_fork_hooks(support::ForkStage::kPmu, {.child = forget_thread_cache}), true);

void store_entry(CalltraceSource& s, bool exit, const void* function, const void* call_site) {
  if (s.event.state.load(std::memory_order_acquire) != core::EventState::kActive) return;
  const trace::CallEntry entry =
      s.encoder.encode(exit, reinterpret_cast<std::uintptr_t>(function),
                       reinterpret_cast<std::uintptr_t>(call_site), s.event.clock_now());
  switch (s.stream.append(entry.units, entry.bytes)) {
    case core::AuxStream::Append::kOk:
      s.encoder.commit(entry);
      // Only the traced thread writes these: a plain increment, not a locked add (a RESET racing
      // with it may be undone by one entry, as the kernel's unlocked hwc counters can be).
      s.recorded.store(s.recorded.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      s.event.count.store(s.event.count.load(std::memory_order_relaxed) + 1,
                          std::memory_order_relaxed);
      break;
    case core::AuxStream::Append::kStopped:
      s.encoder.reset();
      break;
    default:
      s.encoder.reset();  // the stream has a gap (counted by the stream): the next entry re-syncs
      break;
  }
}

}  // namespace

int CalltracePmu::event_bind(core::Event& event) {
  // Function hooks run on the traced thread; a CPU-wide event would need every thread's.
  if (event.pid == -1) return -EOPNOTSUPP;
  if (g_sources.find([&](CalltraceSource& s) { return s.tid == event.pid; }) != nullptr) {
    return -EBUSY;
  }
  auto source = std::make_unique<CalltraceSource>(event, engine_.grace_period());
  if (!g_sources.insert(source.get())) return -EMFILE;
  bump_generation();
  attach(event, std::move(source));
  return 0;
}

void CalltracePmu::unpublish(Source& source) {
  // Unpublished first, then the generation moves: a hook that sees the new generation looks the
  // table up again and cannot find the source; one that saw the old one is inside the table's
  // guard, which synchronize() waits for.
  g_sources.remove(static_cast<CalltraceSource*>(&source));
  bump_generation();
  g_sources.synchronize();
}

CalltracePmu::Stats CalltracePmu::stats(core::Event& event) const {
  Stats out;
  if (auto* s = static_cast<CalltraceSource*>(source_of(event))) {
    out.recorded = s->recorded.load();
    out.nested = s->nested.load();
    out.dropped = s->stream.dropped();
  }
  return out;
}

void CalltracePmu::record(bool exit, const void* function, const void* call_site) {
  ThreadCache& cache = t_cache;
  if (cache.source == nullptr && cache.generation == g_generation.load(std::memory_order_relaxed)) {
    return;  // no calltrace event for this thread
  }
  core::OutputGuard guard(g_sources.grace());
  // Loaded inside the guard: a source found under this generation stays alive until we leave.
  const std::uint64_t generation = g_generation.load(std::memory_order_seq_cst);
  if (cache.busy) {
    // A signal handler interrupted this thread's own hook: the encoder is mid-entry.
    if (cache.generation == generation && cache.source != nullptr) {
      cache.source->nested.fetch_add(1, std::memory_order_relaxed);
    }
    return;
  }
  cache.busy = true;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  if (cache.generation != generation) {
    const pid_t tid = support::current_tid();
    CalltraceSource* found = g_sources.find([tid](CalltraceSource& s) { return s.tid == tid; });
    cache.source = found;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    cache.generation = generation;
  }
  if (cache.source != nullptr) store_entry(*cache.source, exit, function, call_site);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  cache.busy = false;
}

}  // namespace userperf::pmu
