#include "report/profile.hpp"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <unordered_map>

#include "abi/sample_parser.hpp"
#include "perfdata/malformed.hpp"
#include "perfdata/record_names.hpp"
#include "report/address_space.hpp"
#include "report/dwarf_unwinder.hpp"
#include "report/location_table.hpp"
#include "report/process_records.hpp"
#include "report/user_regs.hpp"

namespace userperf::report {

namespace {

// A record to replay, with the time it sorts by.
struct TimedRecord {
  std::uint64_t time = 0;
  perfdata::RecordView record;
  int attr = -1;
};

bool wanted(std::uint32_t type) {
  return type == PERF_RECORD_SAMPLE || type == PERF_RECORD_LOST ||
         type == PERF_RECORD_LOST_SAMPLES || is_process_record(type);
}

class ProfileBuilder {
 public:
  ProfileBuilder(const perfdata::Reader& reader, const ProfileOptions& options, Profile& out)
      : reader_(reader),
        options_(options),
        out_(out),
        locations_(out, reader.features(), options.lines) {}

  Expected<void> run() {
    for (std::size_t i = 0; i < reader_.attrs().size(); ++i) {
      out_.events.push_back({name_of(i), reader_.attrs()[i].attr, 0, 0});
      formats_.push_back(abi::SampleFormat::from_attr(reader_.attrs()[i].attr));
    }
    std::vector<TimedRecord> records;
    if (Expected<void> collected = collect(records); !collected) return collected;
    std::stable_sort(records.begin(), records.end(),
                     [](const TimedRecord& a, const TimedRecord& b) { return a.time < b.time; });
    // The second half of the progress: replaying, counted in records.
    for (std::size_t i = 0; i < records.size(); ++i) {
      if ((i & 4095) == 0) progress(records.size() + i, 2 * records.size());
      if (Expected<void> replayed = replay(records[i]); !replayed) return replayed;
    }
    for (const auto& [path, map] : locations_.resolver().perf_maps()) {
      if (map.malformed() == 0) continue;
      out_.notes.push_back(path + ": " + std::to_string(map.malformed()) +
                           (map.malformed() == 1 ? " malformed line" : " malformed lines") +
                           " skipped");
    }
    return {};
  }

 private:
  std::string name_of(std::size_t attr) const {
    const auto& descs = reader_.features().event_desc;
    if (descs) {
      for (const perfdata::EventDesc& desc : *descs) {
        for (std::uint64_t id : desc.ids) {
          if (reader_.attr_index_of_id(id) == static_cast<int>(attr)) return desc.name;
        }
      }
      if (descs->size() == reader_.attrs().size()) return (*descs)[attr].name;
    }
    return event_name(reader_.attrs()[attr].attr);
  }

  // Every record the report needs, with its time (samples: TIME; others: their sample_id
  // trailer's TIME, else the time of the record before them, so they keep their place).
  Expected<void> collect(std::vector<TimedRecord>& out) {
    perfdata::RecordCursor cursor = reader_.records();
    perfdata::RecordView record;
    std::uint64_t last_time = 0;
    for (std::uint64_t count = 0;; ++count) {
      if ((count & 4095) == 0) {
        // The first half of the progress: reading, counted in bytes of the data section.
        const std::uint64_t size = reader_.data_end() - reader_.data_begin();
        const std::uint64_t done = record.offset - std::min(record.offset, reader_.data_begin());
        progress(done, 2 * size);
      }
      const auto next = cursor.next(record);
      if (next == perfdata::RecordCursor::Next::kEnd) {
        out_.unfinished = reader_.unfinished_note(cursor.truncated_tail());
        return {};
      }
      if (next == perfdata::RecordCursor::Next::kError) return cursor.error();
      const std::uint32_t type = record.header.type;
      if (!wanted(type)) continue;
      const int attr = reader_.attr_index(record);
      std::uint64_t time = last_time;
      if (type == PERF_RECORD_SAMPLE) {
        if (attr < 0)
          return perfdata::malformed_at(record.offset, "sample of no event in the file");
        const perf_event_attr& a = reader_.attrs()[attr].attr;
        const abi::ParseStatus status = abi::parse_sample(record.bytes, formats_[attr], parsed_);
        if (!status.ok()) return bad_sample(record, status);
        if (a.sample_type & PERF_SAMPLE_TIME) time = parsed_.time;
      } else if (attr >= 0 && reader_.attrs()[attr].attr.sample_id_all) {
        const perf_event_attr& a = reader_.attrs()[attr].attr;
        if (abi::parse_sample_id(record.bytes, a.sample_type, parsed_id_).ok() &&
            (a.sample_type & PERF_SAMPLE_TIME)) {
          time = parsed_id_.time;
        }
      }
      last_time = time;
      out.push_back({time, record, attr});
    }
  }

  static Error bad_sample(const perfdata::RecordView& record, const abi::ParseStatus& status) {
    return perfdata::malformed_at(record.offset,
                                  std::string("malformed sample: ") + abi::to_string(status.error) +
                                      " at record byte " + std::to_string(status.offset));
  }

  Expected<void> replay(const TimedRecord& timed) {
    const perfdata::RecordView& record = timed.record;
    if (is_process_record(record.header.type)) {
      if (replay_process_record(processes_, record)) return {};
      return perfdata::malformed_at(
          record.offset,
          std::string("truncated ") + perfdata::record_type_name(record.header.type));
    }
    switch (record.header.type) {
      case PERF_RECORD_LOST:
      case PERF_RECORD_LOST_SAMPLES: {
        // LOST: {id, lost}; LOST_SAMPLES: {lost}.
        const std::size_t at =
            sizeof(perf_event_header) + (record.header.type == PERF_RECORD_LOST ? 8 : 0);
        std::uint64_t lost = 0;
        if (record.bytes.size() < at + sizeof lost) {
          return perfdata::malformed_at(record.offset, "truncated LOST record");
        }
        std::memcpy(&lost, record.bytes.data() + at, sizeof lost);
        if (record.header.type == PERF_RECORD_LOST) {
          ++out_.lost_records;
          out_.lost_in_records += lost;
        } else {
          out_.lost_samples += lost;
        }
        return {};
      }
      case PERF_RECORD_SAMPLE:
        return sample(timed);
      default:
        return {};
    }
  }

  Expected<void> sample(const TimedRecord& timed) {
    const perfdata::RecordView& record = timed.record;
    const perf_event_attr& attr = reader_.attrs()[timed.attr].attr;
    abi::ParsedSample& s = parsed_;
    const abi::ParseStatus status = abi::parse_sample(record.bytes, formats_[timed.attr], s);
    if (!status.ok()) return bad_sample(record, status);

    chain_.clear();
    resolve_chain(record, attr, s);
    std::uint64_t period = 1;
    if (attr.sample_type & PERF_SAMPLE_PERIOD) {
      period = s.period;
    } else if (!attr.freq && attr.sample_period != 0) {
      period = attr.sample_period;
    }

    EventProfile& event = out_.events[timed.attr];
    ++event.samples;
    event.total_period += period;
    const ThreadId thread = thread_of(s.pid, s.tid);
    Stack& stack = out_.stacks[stack_of(timed.attr, thread)];
    ++stack.samples;
    stack.period += period;
    if (options_.on_sample) {
      options_.on_sample({out_, timed.attr, thread, period, out_.frames_of(stack)});
    }
    return {};
  }

  ThreadId thread_of(std::uint32_t pid, std::uint32_t tid) {
    const std::uint64_t key = std::uint64_t{pid} << 32 | tid;
    auto [cached, fresh] = thread_cache_.try_emplace(key);
    if (!fresh && cached->second.generation == processes_.command_generation()) {
      return cached->second.thread;
    }
    std::string command = processes_.command(pid, tid);
    std::string name = std::to_string(key);
    name += '\0';
    name += command;
    auto [it, added] =
        threads_.try_emplace(std::move(name), static_cast<ThreadId>(out_.threads.size()));
    if (added) out_.threads.push_back({pid, tid, std::move(command)});
    cached->second = {it->second, processes_.command_generation()};
    return it->second;
  }

  // The stack of (event, thread, chain_), made when new.
  std::size_t stack_of(int event, ThreadId thread) {
    std::uint64_t hash =
        (std::uint64_t{static_cast<std::uint32_t>(event)} << 32 | thread) * 0x9e3779b97f4a7c15ULL;
    for (LocationId location : chain_) hash = (hash ^ location) * 0x100000001b3ULL;
    auto [head, fresh] = stack_heads_.try_emplace(hash, kNoStack);
    for (std::uint32_t at = head->second; at != kNoStack; at = stack_next_[at]) {
      const Stack& stack = out_.stacks[at];
      const auto frames = out_.frames_of(stack);
      if (stack.event == event && stack.thread == thread &&
          std::equal(frames.begin(), frames.end(), chain_.begin(), chain_.end())) {
        return at;
      }
    }
    Stack stack;
    stack.event = event;
    stack.thread = thread;
    stack.first = static_cast<std::uint32_t>(out_.frames.size());
    stack.depth = static_cast<std::uint32_t>(chain_.size());
    out_.frames.insert(out_.frames.end(), chain_.begin(), chain_.end());
    out_.stacks.push_back(stack);
    stack_next_.push_back(head->second);
    head->second = static_cast<std::uint32_t>(out_.stacks.size() - 1);
    return head->second;
  }

  void progress(std::uint64_t done, std::uint64_t total) {
    if (!options_.on_progress) return;
    const auto now = std::chrono::steady_clock::now();
    if (now < next_progress_) return;
    if (next_progress_ != std::chrono::steady_clock::time_point{})
      options_.on_progress(done, total);
    next_progress_ = now + std::chrono::seconds(2);
  }

  // chain_ = the sample's locations, leaf first.
  void resolve_chain(const perfdata::RecordView& record, const perf_event_attr& attr,
                     const abi::ParsedSample& s) {
    AddressSpace& space = processes_.space(s.pid);
    UserRegs regs;
    const bool dwarf = (attr.sample_type & PERF_SAMPLE_REGS_USER) &&
                       (attr.sample_type & PERF_SAMPLE_STACK_USER) && regs.load(s.regs_user) &&
                       s.stack_size > 0;
    const std::uint16_t cpumode = record.header.misc & PERF_RECORD_MISC_CPUMODE_MASK;
    bool kernel = cpumode == PERF_RECORD_MISC_KERNEL;
    for (std::uint64_t entry : s.callchain) {
      if (entry >= static_cast<std::uint64_t>(PERF_CONTEXT_MAX)) {
        kernel = entry == static_cast<std::uint64_t>(PERF_CONTEXT_KERNEL);
        continue;
      }
      // Not return: the leaf fallback below must still see the sample (--max-stack 0).
      if (chain_.size() >= options_.max_frames) break;
      if (!kernel && dwarf) continue;  // the unwound frames replace these
      // Each entry is looked up as recorded, return addresses too, as perf's add_callchain_ip
      // does: a call that ends its function returns to the next symbol (ld.so's _start calls
      // _dl_start and returns to the label _dl_start_user), and perf names that one.
      chain_.push_back(kernel ? locations_.kernel(entry) : locations_.user(space, entry, false));
    }
    if (dwarf) {
      // dyn_size: how many of the copied bytes are real (0: none), as perf reads it.
      const std::uint64_t valid = std::min<std::uint64_t>(s.stack_dyn_size, s.stack.size);
      const auto stack = record.bytes.subspan(s.stack.offset, valid);
      const std::size_t room = options_.max_frames - std::min(options_.max_frames, chain_.size());
      for (const UnwoundFrame& frame : unwinder_.unwind(s.pid, space, regs, stack, room)) {
        chain_.push_back(locations_.user(space, frame.pc, !frame.activation));
      }
      ++out_.dwarf_samples;
    }
    if (chain_.empty()) {
      chain_.push_back(cpumode == PERF_RECORD_MISC_KERNEL ? locations_.kernel(s.ip)
                                                          : locations_.user(space, s.ip, false));
    }
  }

  const perfdata::Reader& reader_;
  const ProfileOptions& options_;
  Profile& out_;
  std::vector<abi::SampleFormat> formats_;  // per attr, made once: it is a vector of fields
  abi::ParsedSample parsed_;                // reused: parse_sample keeps its vectors' capacity
  abi::ParsedSampleId parsed_id_;           // the same for sample_id trailers
  ProcessTable processes_;
  LocationTable locations_;
  DwarfUnwinder unwinder_;
  std::vector<LocationId> chain_;
  struct CachedThread {
    ThreadId thread = 0;
    std::uint64_t generation = 0;
  };
  std::unordered_map<std::uint64_t, CachedThread> thread_cache_;  // pid << 32 | tid
  std::unordered_map<std::string, ThreadId> threads_;             // "key\0command" -> thread
  // Stacks by hash of (event, thread, frames), chained through stack_next_ on collisions.
  static constexpr std::uint32_t kNoStack = UINT32_MAX;
  std::unordered_map<std::uint64_t, std::uint32_t> stack_heads_;
  std::vector<std::uint32_t> stack_next_;
  std::chrono::steady_clock::time_point next_progress_{};
};

}  // namespace

namespace {

// perf's modifiers of an event's name: ":" and the contexts counted (k, u, h) when some are
// excluded, "p" per level of precise_ip, and H/G (host, guest) when only one of them is excluded
// or neither is while nothing above was printed: "cpu-clock:uh" counts user and hypervisor only.
std::string modifiers(const perf_event_attr& attr) {
  std::string mods;
  bool guest_excluded_by_default = false;
  if (attr.exclude_kernel || attr.exclude_user || attr.exclude_hv) {
    if (!attr.exclude_kernel) mods += 'k';
    if (!attr.exclude_user) mods += 'u';
    if (!attr.exclude_hv) mods += 'h';
    guest_excluded_by_default = true;
  }
  if (attr.precise_ip) {
    mods.append(std::min<unsigned>(attr.precise_ip, 3), 'p');
    guest_excluded_by_default = true;
  }
  if (attr.exclude_host || bool(attr.exclude_guest) == guest_excluded_by_default) {
    if (!attr.exclude_host) mods += 'H';
    if (!attr.exclude_guest) mods += 'G';
  }
  return mods.empty() ? mods : ':' + mods;
}

}  // namespace

std::string event_name(const perf_event_attr& attr) {
  static const char* const kSoftware[] = {
      "cpu-clock",        "task-clock",   "page-faults",  "context-switches",
      "cpu-migrations",   "minor-faults", "major-faults", "alignment-faults",
      "emulation-faults", "dummy",        "bpf-output"};
  static const char* const kHardware[] = {"cycles",
                                          "instructions",
                                          "cache-references",
                                          "cache-misses",
                                          "branches",
                                          "branch-misses",
                                          "bus-cycles",
                                          "stalled-cycles-frontend",
                                          "stalled-cycles-backend",
                                          "ref-cycles"};
  if (attr.type == PERF_TYPE_SOFTWARE && attr.config < std::size(kSoftware)) {
    return kSoftware[attr.config] + modifiers(attr);
  }
  if (attr.type == PERF_TYPE_HARDWARE && attr.config < std::size(kHardware)) {
    return kHardware[attr.config] + modifiers(attr);
  }
  char name[64];
  std::snprintf(name, sizeof name, "%u/%#llx/", attr.type,
                static_cast<unsigned long long>(attr.config));
  return name;
}

Expected<Profile> build_profile(const perfdata::Reader& reader, const ProfileOptions& options) {
  Profile profile;
  if (Expected<void> built = ProfileBuilder(reader, options, profile).run(); !built) {
    return built.error();
  }
  return profile;
}

}  // namespace userperf::report
