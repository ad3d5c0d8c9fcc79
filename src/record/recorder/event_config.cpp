#include "record/recorder/event_config.hpp"

#include <cerrno>
#include <cstdlib>

namespace userperf::record {

namespace {

constexpr std::uint32_t kMaxStackSize = 65528;      // perf: USHRT_MAX rounded down to 8
constexpr std::uint64_t kDwarfRegsMask = 0xff0fff;  // x86-64: perf's PERF_REGS_MASK
constexpr std::uint32_t kDefaultAuxSample = 4096;
constexpr std::size_t kMaxEvents = kMaxThreadEvents;

bool parse_number(const std::string& text, std::uint64_t max, std::uint64_t& out) {
  if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != text.npos) {
    return false;
  }
  out = std::strtoull(text.c_str(), nullptr, 10);
  return out <= max;
}

bool is_power_of_two(std::uint64_t v) {
  return v != 0 && (v & (v - 1)) == 0;
}

// A C identifier: what the tracepoint header's provider and event names are.
bool is_identifier(const std::string& text) {
  if (text.empty() || (text[0] >= '0' && text[0] <= '9')) return false;
  for (const char c : text) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

// The fields every attr shares, as perf record sets them for user-space sampling. The sample_id
// trailer (TID|TIME|IDENTIFIER) is the same in every attr, so perf locates ids alike in all.
perf_event_attr base_attr(const RecordRequest& request) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD |
                     PERF_SAMPLE_IDENTIFIER;
  if (request.call_graph != CallGraph::kNone) attr.sample_type |= PERF_SAMPLE_CALLCHAIN;
  if (request.call_graph == CallGraph::kDwarf) {
    // perf's DWARF mode: registers and a stack copy, unwound at report time; the callchain then
    // holds no user part.
    attr.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
    attr.sample_regs_user = kDwarfRegsMask;
    attr.sample_stack_user = request.stack_size;
    attr.exclude_callchain_user = 1;
  }
  attr.sample_id_all = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  return attr;
}

}  // namespace

Expected<void> parse_call_graph(const std::string& text, RecordRequest& request) {
  if (text == "fp") {
    request.call_graph = CallGraph::kFramePointer;
    return {};
  }
  if (text == "dwarf" || text.rfind("dwarf,", 0) == 0) {
    request.call_graph = CallGraph::kDwarf;
    if (text.size() > 6) {
      std::uint64_t size = 0;
      if (!parse_number(text.substr(6), kMaxStackSize, size) || size == 0) {
        return make_error(EINVAL, "callchain: incorrect stack dump size '" + text.substr(6) +
                                      "' (max " + std::to_string(kMaxStackSize) + ")");
      }
      request.stack_size = static_cast<std::uint32_t>((size + 7) & ~std::uint64_t{7});
    }
    return {};
  }
  return make_error(EINVAL, "unknown --call-graph mode '" + text + "' (fp, dwarf or dwarf,SIZE)");
}

Expected<void> parse_mmap_pages(const std::string& text, RecordRequest& request) {
  const std::size_t comma = text.find(',');
  std::uint64_t pages = 0, aux = 0;
  const bool ok = parse_number(text.substr(0, comma), 1 << 20, pages) && is_power_of_two(pages) &&
                  (comma == text.npos ||
                   (parse_number(text.substr(comma + 1), 1 << 20, aux) && is_power_of_two(aux)));
  if (!ok) {
    return make_error(
        EINVAL, "-m " + text + ": the number of pages must be a power of two (PAGES[,AUX_PAGES])");
  }
  request.ring_pages = static_cast<std::uint32_t>(pages);
  if (comma != text.npos) request.aux_pages = static_cast<std::uint32_t>(aux);
  return {};
}

Expected<RecordConfig> build_record_config(const RecordRequest& request, int aux_pmu_type) {
  if (request.frequency != 0 && request.period != 0) {
    return make_error(EINVAL, "-F and -c cannot be used together");
  }
  if (request.stack_size == 0 || request.stack_size % 8 != 0 ||
      request.stack_size > kMaxStackSize) {
    return make_error(EINVAL, "stack dump size " + std::to_string(request.stack_size) +
                                  " is not a multiple of 8 up to " + std::to_string(kMaxStackSize));
  }
  RecordConfig config;
  config.ring_pages = request.ring_pages;
  if (!is_power_of_two(config.ring_pages)) {
    return make_error(EINVAL, "the ring must have a power of two pages");
  }
  if (request.aux != AuxSource::kNone) {
    if (aux_pmu_type < 0) {
      return make_error(EINVAL, "the --aux source's PMU is not registered");
    }
    EventConfig leader;
    leader.attr = base_attr(request);
    leader.attr.type = static_cast<std::uint32_t>(aux_pmu_type);
    // IP although the AUX event writes no samples: perf script refuses an attr without IP or ADDR.
    leader.attr.sample_type =
        PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_IDENTIFIER;
    leader.name = request.aux == AuxSource::kCalltrace ? "calltrace" : "log";
    config.events.push_back(std::move(leader));
    config.aux = request.aux;
    config.aux_pages = request.aux_pages;
    if (!is_power_of_two(config.aux_pages)) {
      return make_error(EINVAL, "the AUX area must have a power of two pages");
    }
  }
  const std::vector<std::string> names =
      request.events.empty() ? std::vector<std::string>{"cpu-clock"} : request.events;
  std::uint64_t tracepoints = 0;
  // With --aux, every sampling event is in the AUX leader's group (index 0) and its samples carry
  // the leader's newest AUX bytes.
  const auto join_aux_group = [&](EventConfig& e) {
    if (request.aux == AuxSource::kNone) return;
    e.group_leader = 0;
    e.attr.sample_type |= PERF_SAMPLE_AUX;
    e.attr.aux_sample_size =
        request.aux_sample_size != 0 ? request.aux_sample_size : kDefaultAuxSample;
  };
  for (const std::string& name : names) {
    for (const EventConfig& earlier : config.events) {
      if (earlier.name == name) {
        return make_error(EINVAL, "event '" + name + "' is named twice");
      }
    }
    EventConfig e;
    e.attr = base_attr(request);
    e.name = name;
    const std::size_t colon = name.find(':');
    if (name == "cpu-clock" || name == "task-clock") {
      e.attr.type = PERF_TYPE_SOFTWARE;
      e.attr.config = name == "cpu-clock" ? PERF_COUNT_SW_CPU_CLOCK : PERF_COUNT_SW_TASK_CLOCK;
      if (request.period != 0) {
        e.attr.sample_period = request.period;
      } else {
        e.attr.freq = 1;
        e.attr.sample_freq = request.frequency != 0 ? request.frequency : 1000;
      }
    } else if (colon != name.npos && is_identifier(name.substr(0, colon)) &&
               is_identifier(name.substr(colon + 1))) {
      e.attr.type = PERF_TYPE_TRACEPOINT;
      e.attr.config = kTracepointIdBase + tracepoints++;
      e.attr.sample_period = 1;
      e.attr.sample_type |= PERF_SAMPLE_RAW;
    } else {
      return make_error(
          EINVAL, "unknown event '" + name + "' (cpu-clock, task-clock or provider:tracepoint)");
    }
    join_aux_group(e);
    config.events.push_back(std::move(e));
  }
  if (request.off_cpu) {
    // Written by the agent's wrappers of blocking calls (docs/record.md, "Off-CPU time"), from
    // their own frame: a frame-pointer chain, no registers or stack copy of the blocked call.
    if (request.call_graph == CallGraph::kDwarf) {
      return make_error(EINVAL, "--off-cpu takes -g (frame-pointer) call graphs, not dwarf");
    }
    EventConfig e;
    e.attr = base_attr(request);
    e.attr.type = PERF_TYPE_SOFTWARE;
    e.attr.config = PERF_COUNT_SW_BPF_OUTPUT;
    e.attr.sample_period = 1;
    e.name = kOffCpuEventName;
    join_aux_group(e);
    config.events.push_back(std::move(e));
  }
  if (config.events.size() > kMaxEvents) {
    return make_error(
        EINVAL, "at most " + std::to_string(kMaxEvents) + " events (the AUX leader included)");
  }
  return config;
}

std::string pmu_name_of(const EventConfig& event) {
  switch (event.attr.type) {
    case PERF_TYPE_SOFTWARE:
      return "software";
    case PERF_TYPE_TRACEPOINT:
      return "tracepoint";
    default:
      return event.name;
  }
}

}  // namespace userperf::record
