// SIGNAL-SAFE from tracepoint_fire down; everything else runs under the registry mutex.
#include "pmu/tracepoint/tracepoint_pmu.hpp"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#include "core/overflow.hpp"
#include "core/sample_output.hpp"
#include "pmu/tracepoint/tracepoint_descriptor.hpp"
#include "support/task_ids.hpp"
#include "userperf/tracepoint.h"

namespace userperf::pmu {

namespace {

constexpr std::size_t kMaxIds = 512;           // defined ids (names the recorder asked for)
constexpr std::size_t kMaxEventsPerId = 256;   // events of one id: one per recorded thread
constexpr std::uint64_t kMaxId = 0xffff;       // common_type is an unsigned short
constexpr std::uint32_t kMaxDynamic = 0xffff;  // __data_loc: 16-bit offset and length

// ---- the write path's view: one table of events per defined id ------------------------------

struct EventTable {
  std::atomic<std::size_t> used{0};  // slots at or above it were never used
  std::array<std::atomic<core::Event*>, kMaxEventsPerId> events{};
  // Written when the first descriptor is bound, before its library_slot is published (the write
  // path loads that with acquire): every descriptor of an id has the same fields.
  std::uint64_t id = 0;
  Layout layout;
};

constinit std::array<EventTable, kMaxIds> g_tables;
// Fire paths read tables inside it; destroy() and unregister wait for them before letting go.
constinit core::GracePeriod g_grace;

void synchronize() {
  g_grace.synchronize();
}

// ---- the bookkeeping: names, ids, descriptors (registry mutex) -------------------------------

struct FieldSpec {
  std::uint32_t kind = 0;
  std::string name;
};

struct Definition {
  std::uint64_t id = 0;
  std::string name;  // "provider:name"
  std::uint32_t table = 0;
  std::size_t nr_events = 0;
  bool format_sent = false;
  // The first bound descriptor's fields, copied (its object may be unloaded): the table's layout
  // and the format sent describe them, so every later descriptor must have them too.
  std::vector<FieldSpec> fields;
  std::vector<userperf_tracepoint*> descriptors;  // registered under this name
};

struct Registry {
  std::mutex mutex;
  std::vector<Definition> definitions;        // index == table
  std::vector<userperf_tracepoint*> unbound;  // registered, name not defined (yet)
  TracepointFormatCallback callback = nullptr;
};

// Leaked: descriptors of objects unloaded at exit unregister after static destructors ran.
Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}

bool same_fields(const userperf_tracepoint& a, const userperf_tracepoint& b) {
  if (a.nr_fields != b.nr_fields) return false;
  for (std::uint32_t i = 0; i < a.nr_fields; ++i) {
    if (a.fields[i].kind != b.fields[i].kind ||
        std::strcmp(a.fields[i].name, b.fields[i].name) != 0) {
      return false;
    }
  }
  return true;
}

bool same_fields(const std::vector<FieldSpec>& fields, const userperf_tracepoint& tp) {
  if (fields.size() != tp.nr_fields) return false;
  for (std::uint32_t i = 0; i < tp.nr_fields; ++i) {
    if (fields[i].kind != tp.fields[i].kind || fields[i].name != tp.fields[i].name) return false;
  }
  return true;
}

Definition* find_definition(Registry& r, const std::string& name) {
  for (Definition& d : r.definitions) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

void set_enabled(const Definition& d) {
  const int enabled = d.nr_events != 0 ? 1 : 0;
  for (userperf_tracepoint* tp : d.descriptors) {
    __atomic_store_n(&tp->enabled, enabled, __ATOMIC_RELEASE);
  }
}

// Binds a registered descriptor to its definition. Returns the format to report, if due.
std::string bind(Definition& d, userperf_tracepoint& tp) {
  if (!d.format_sent) {
    g_tables[d.table].layout = layout_of(tp);
    for (std::uint32_t i = 0; i < tp.nr_fields; ++i) {
      d.fields.push_back({tp.fields[i].kind, tp.fields[i].name});
    }
  }
  d.descriptors.push_back(&tp);
  __atomic_store_n(&tp.library_slot, d.table + 1, __ATOMIC_RELEASE);
  set_enabled(d);
  if (d.format_sent) return {};
  d.format_sent = true;
  return tracepoint_format(tp, d.id);
}

void report(TracepointFormatCallback callback, std::uint64_t id, const std::string& format) {
  if (callback != nullptr && !format.empty()) callback(id, format.data(), format.size());
}

// ---- building the record from fragments -------------------------------------------------------

struct CommonHeader {
  std::uint16_t type;
  std::uint8_t flags;
  std::uint8_t preempt_count;
  std::int32_t pid;
};
static_assert(sizeof(CommonHeader) == kCommonSize);

constexpr std::uint8_t kZeros[1] = {};
constexpr char kNullString[] = "(null)";

// The fixed part (common header, the fields at their offsets, padding, __data_loc words) is one
// fragment whose copy callback stores each piece from the arguments straight into the ring (no
// staging copy, except when the part straddles the ring's end: then it is built on the stack and
// each side's window copied from there). Then one fragment per piece of dynamic data (by pointer;
// a string's NUL is a fragment of its own, so a string that changes while it is copied still ends
// in one).
constexpr std::size_t kMaxFragments = 1 + 2 * USERPERF_TP_MAX_FIELDS;
constexpr std::size_t kMaxFixedSize = kCommonSize + 8 * USERPERF_TP_MAX_FIELDS;

struct FixedPart {
  const userperf_tracepoint* tp;
  const void* const* args;
  const Layout* layout;
  CommonHeader common;
  std::array<std::uint32_t, USERPERF_TP_MAX_FIELDS> locs;  // set for the dynamic fields only
};

// The whole fixed part at dst: padding zeroed, each field one move of its size.
void store_fixed_part(std::uint8_t* dst, const FixedPart& part) {
  const Layout& layout = *part.layout;
  if (layout.padded) std::memset(dst, 0, layout.fixed_size);
  std::memcpy(dst, &part.common, sizeof part.common);
  for (std::uint32_t i = 0; i < part.tp->nr_fields; ++i) {
    const FieldLayout& f = layout.fields[i];
    const auto* src = static_cast<const std::uint8_t*>(f.dynamic ? &part.locs[i] : part.args[i]);
    std::uint8_t* at = dst + f.offset;
    switch (f.size) {
      case 1:
        *at = *src;
        break;
      case 2:
        std::memcpy(at, src, 2);
        break;
      case 4:
        std::memcpy(at, src, 4);
        break;
      default:
        std::memcpy(at, src, 8);
        break;
    }
  }
}

std::size_t copy_fixed_part(void* out, const void* src, std::size_t offset, std::size_t len) {
  const FixedPart& part = *static_cast<const FixedPart*>(src);
  if (offset == 0 && len == part.layout->fixed_size) {
    store_fixed_part(static_cast<std::uint8_t*>(out), part);
    return 0;
  }
  std::uint8_t staged[kMaxFixedSize];
  store_fixed_part(staged, part);
  std::memcpy(out, staged + offset, len);
  return 0;
}

// Left uninitialised: a fire whose thread has no event must not pay for clearing them.
union FragmentSlot {
  FragmentSlot() {}
  core::RawFragment fragment;
};

// The record's RAW payload: raw.frag is the fixed part, each piece of dynamic data is linked
// after it. Built in place: a fragment copied after being stored field by field would wait on
// store forwarding.
struct RecordParts {
  FixedPart fixed;
  core::RawRecord raw;
  std::array<FragmentSlot, kMaxFragments - 1> dynamic;
  std::size_t nr = 0;
  core::RawFragment* last = &raw.frag;

  void add(const void* data, std::size_t size) {
    if (size == 0) return;
    core::RawFragment* f =
        new (&dynamic[nr++].fragment) core::RawFragment{data, static_cast<std::uint32_t>(size)};
    last->next = f;
    last = f;
  }
};

struct DynamicPiece {
  const void* data;
  std::size_t size;
  bool nul;  // a NUL byte follows (strings)
};

// False when the record cannot be encoded (a __data_loc beyond 16 bits).
bool build_record(const userperf_tracepoint& tp, const void* const* args, const Layout& layout,
                  std::uint64_t id, pid_t tid, RecordParts& parts) {
  parts.fixed.tp = &tp;
  parts.fixed.args = args;
  parts.fixed.layout = &layout;
  parts.fixed.common = {static_cast<std::uint16_t>(id), 0, 0, tid};
  parts.raw.frag = {&parts.fixed, layout.fixed_size, copy_fixed_part, nullptr};
  std::uint32_t dynamic_offset = layout.fixed_size;
  for (std::uint32_t i = 0; i < tp.nr_fields; ++i) {
    if (!layout.fields[i].dynamic) continue;
    DynamicPiece piece;
    if (tp.fields[i].kind == USERPERF_TP_STRING) {
      const char* s = *static_cast<const char* const*>(args[i]);
      if (s == nullptr) s = kNullString;
      piece = {s, std::strlen(s), true};
    } else {
      const auto& bytes = *static_cast<const userperf_bytes*>(args[i]);
      piece = {bytes.data, bytes.data != nullptr ? bytes.len : 0, false};
    }
    const std::size_t len = piece.size + (piece.nul ? 1 : 0);
    if (len > kMaxDynamic || dynamic_offset > kMaxDynamic) return false;
    parts.fixed.locs[i] = static_cast<std::uint32_t>(len << 16) | dynamic_offset;
    dynamic_offset += static_cast<std::uint32_t>(len);
    parts.add(piece.data, piece.size);
    if (piece.nul) parts.add(kZeros, 1);
  }
  return true;
}

std::uint32_t table_of(const core::Event& event) {
  return static_cast<std::uint32_t>(event.pmu_private);  // table + 1, 0: none
}

}  // namespace

// ---- registry ---------------------------------------------------------------------------------

int tracepoint_register(userperf_tracepoint& tp) {
  if (const Expected<void> checked = tracepoint_check(tp); !checked) {
    std::fprintf(stderr, "userperf: tracepoint refused: %s\n", checked.error().message.c_str());
    return -checked.error().code;
  }
  Registry& r = registry();
  std::unique_lock lock(r.mutex);
  const std::string name = full_name(tp);
  // Every descriptor of a name (one per translation unit that defines it) must agree.
  auto conflicts = [&](const userperf_tracepoint* other) {
    return other != &tp && full_name(*other) == name && !same_fields(*other, tp);
  };
  Definition* d = find_definition(r, name);
  const auto& peers = d != nullptr ? d->descriptors : r.unbound;
  if (std::find(peers.begin(), peers.end(), &tp) != peers.end()) return 0;  // registered already
  // Against the definition's fields too: its peers may all have been unregistered (dlclose).
  bool conflict = d != nullptr && d->format_sent && !same_fields(d->fields, tp);
  for (const userperf_tracepoint* other : peers) {
    conflict = conflict || conflicts(other);
  }
  if (conflict) {
    lock.unlock();
    std::fprintf(stderr, "userperf: tracepoint refused: %s registered with other fields\n",
                 name.c_str());
    return -EEXIST;
  }
  if (d == nullptr) {
    r.unbound.push_back(&tp);
    return 0;
  }
  const std::string format = bind(*d, tp);
  const std::uint64_t id = d->id;
  const TracepointFormatCallback callback = r.callback;
  lock.unlock();
  report(callback, id, format);
  return 0;
}

void tracepoint_unregister(userperf_tracepoint& tp) {
  Registry& r = registry();
  {
    std::lock_guard lock(r.mutex);
    std::erase(r.unbound, &tp);
    for (Definition& d : r.definitions) std::erase(d.descriptors, &tp);
    __atomic_store_n(&tp.enabled, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&tp.library_slot, 0u, __ATOMIC_RELEASE);
  }
  synchronize();  // a fire that loaded the slot before has left
}

void tracepoint_define(std::uint64_t id, const std::string& name) {
  if (id > kMaxId) return;
  Registry& r = registry();
  std::unique_lock lock(r.mutex);
  for (const Definition& d : r.definitions) {
    if (d.id == id || d.name == name) return;  // defined already (or a conflict: the first wins)
  }
  if (r.definitions.size() >= kMaxIds) return;
  Definition& d = r.definitions.emplace_back();
  d.id = id;
  d.name = name;
  d.table = static_cast<std::uint32_t>(r.definitions.size() - 1);
  g_tables[d.table].id = id;
  std::string format;
  for (userperf_tracepoint* tp : r.unbound) {
    if (full_name(*tp) != name) continue;
    std::string f = bind(d, *tp);
    if (!f.empty()) format = std::move(f);
  }
  std::erase_if(r.unbound, [&](userperf_tracepoint* tp) { return full_name(*tp) == name; });
  const TracepointFormatCallback callback = r.callback;
  lock.unlock();
  report(callback, id, format);
}

void tracepoint_set_format_callback(TracepointFormatCallback callback) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.callback = callback;
}

// ---- write path -------------------------------------------------------------------------------

namespace {

// The events of a table that sample thread `tid`, each passed to fn.
template <class Fn>
void for_each_event_of(EventTable& table, pid_t tid, Fn&& fn) {
  const std::size_t used = table.used.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < used; ++i) {
    core::Event* event = table.events[i].load(std::memory_order_acquire);
    if (event != nullptr && event->pid == tid) fn(*event);
  }
}

// What a thread's fire of a table finds: its one event, none, or several (then they are scanned).
struct ThreadEvent {
  core::Event* event = nullptr;
  bool several = false;
};

// A thread's lookups, cached: a fire costs a compare instead of a scan of every thread's events.
// Valid while the generation is current (bind and destroy move it, under the registry mutex,
// before destroy's grace period: a cached event is alive while its generation is); keyed by the
// thread id too, so a fork child, whose thread inherits this block with a new id, misses. `busy`
// keeps a fire nested in another on the same thread (a signal handler) from reading or writing
// an entry the interrupted one is in the middle of: the nested one scans.
struct CachedLookup {
  std::uint32_t slot = 0;  // table + 1; 0: empty
  pid_t tid = 0;
  std::uint64_t generation = 0;
  ThreadEvent found;
};
constexpr std::size_t kCachedLookups = 8;  // direct-mapped by slot
struct LookupCache {
  std::array<CachedLookup, kCachedLookups> entries;
  bool busy;
};
__attribute__((tls_model("initial-exec"))) constinit thread_local LookupCache t_lookups{};
constinit std::atomic<std::uint64_t> g_generation{1};

ThreadEvent scan(EventTable& table, pid_t tid) {
  ThreadEvent found;
  for_each_event_of(table, tid, [&](core::Event& event) {
    found.several = found.event != nullptr || found.several;
    found.event = found.several ? nullptr : &event;
  });
  return found;
}

ThreadEvent thread_event(EventTable& table, std::uint32_t slot, pid_t tid) {
  LookupCache& cache = t_lookups;
  if (cache.busy) return scan(table, tid);
  cache.busy = true;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  // Inside the caller's grace period: an event found under this generation outlives the fire.
  const std::uint64_t generation = g_generation.load(std::memory_order_acquire);
  CachedLookup& entry = cache.entries[slot % kCachedLookups];
  if (entry.slot != slot || entry.tid != tid || entry.generation != generation) {
    entry.slot = slot;
    entry.tid = tid;
    entry.generation = generation;
    entry.found = scan(table, tid);
  }
  const ThreadEvent found = entry.found;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  cache.busy = false;
  return found;
}

}  // namespace

void tracepoint_fire(const userperf_tracepoint& tp, const void* const* args, std::uint64_t ip) {
  core::OutputGuard guard(g_grace);
  const std::uint32_t slot = __atomic_load_n(&tp.library_slot, __ATOMIC_ACQUIRE);
  if (slot == 0 || slot > kMaxIds) return;
  EventTable& table = g_tables[slot - 1];
  const pid_t tid = support::current_tid();
  RecordParts parts;
  bool built = false;
  auto fire = [&](core::Event& event) {
    if (event.state.load(std::memory_order_acquire) != core::EventState::kActive) return;
    if (!built) {
      // A field past the 64 KiB record limit: lost, as the kernel's refused samples are.
      if (!build_record(tp, args, table.layout, table.id, tid, parts)) {
        core::count_lost_sample(event);
        return;
      }
      built = true;
    }
    core::Engine& engine = static_cast<TracepointPmu*>(event.pmu)->engine();
    // A software event (perf_tp_event -> perf_swevent_event): its first overflow is never
    // throttled.
    core::count_and_overflow(event, 1, [&](std::uint64_t period, bool throttle) {
      core::SampleData data;
      data.ip = ip;
      data.period = period;
      data.pid = static_cast<std::uint32_t>(support::current_pid());
      data.tid = static_cast<std::uint32_t>(tid);
      if (event.attr.sample_type & PERF_SAMPLE_CPU) {
        data.cpu = static_cast<std::uint32_t>(sched_getcpu());
      }
      data.raw = &parts.raw;
      return engine.overflow(event, data, throttle);
    });
  };
  const ThreadEvent found = thread_event(table, slot, tid);
  if (found.event != nullptr) {
    fire(*found.event);
  } else if (found.several) {
    for_each_event_of(table, tid, fire);
  }
}

// ---- the PMU ----------------------------------------------------------------------------------

int TracepointPmu::event_init(core::Event& event) {
  // perf_tp_event_init: no branch sampling; perf_trace_init: an unknown id is EINVAL.
  if (event.attr.sample_type & PERF_SAMPLE_BRANCH_STACK) return -EOPNOTSUPP;
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  for (const Definition& d : r.definitions) {
    if (d.id == event.attr.config) return 0;
  }
  return -EINVAL;
}

int TracepointPmu::event_bind(core::Event& event) {
  // Fired on the thread that fires; a CPU-wide event would need every thread's.
  if (event.pid == -1) return -EOPNOTSUPP;
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  Definition* d = nullptr;
  for (Definition& candidate : r.definitions) {
    if (candidate.id == event.attr.config) d = &candidate;
  }
  if (d == nullptr) return -EINVAL;
  EventTable& table = g_tables[d->table];
  for (std::size_t i = 0; i < kMaxEventsPerId; ++i) {
    core::Event* expected = nullptr;
    if (!table.events[i].compare_exchange_strong(expected, &event)) continue;
    if (i >= table.used.load(std::memory_order_relaxed)) {
      table.used.store(i + 1, std::memory_order_release);
    }
    event.pmu_private = d->table + 1;
    g_generation.fetch_add(1, std::memory_order_release);
    ++d->nr_events;
    set_enabled(*d);
    return 0;
  }
  return -EMFILE;
}

int TracepointPmu::add(core::Event& event) {
  (void)event;  // the write path checks the event's state
  return 0;
}

void TracepointPmu::del(core::Event& event) {
  (void)event;
}

void TracepointPmu::destroy(core::Event& event) {
  const std::uint32_t slot = table_of(event);
  if (slot == 0) return;
  Registry& r = registry();
  {
    std::lock_guard lock(r.mutex);
    EventTable& table = g_tables[slot - 1];
    for (auto& entry : table.events) {
      core::Event* expected = &event;
      if (entry.compare_exchange_strong(expected, nullptr)) break;
    }
    g_generation.fetch_add(1, std::memory_order_release);  // cached lookups of it are stale
    Definition& d = r.definitions[slot - 1];
    --d.nr_events;
    set_enabled(d);
  }
  synchronize();  // no fire path holds the event any more
  event.pmu_private = 0;
}

}  // namespace userperf::pmu
