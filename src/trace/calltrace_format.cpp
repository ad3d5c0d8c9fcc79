#include "trace/calltrace_format.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "trace/text.hpp"
#include "trace/words.hpp"

namespace userperf::trace {

using namespace calltrace_units;

namespace {

std::uint64_t tag_of(std::uint64_t unit) {
  return unit >> kTagShift;
}

}  // namespace

Expected<void> decode_calltrace(std::span<const std::uint8_t> bytes, std::vector<CallEvent>& out,
                                std::uint64_t* skipped) {
  const std::size_t whole = bytes.size() - bytes.size() % kUnitBytes;
  bool started = false;  // an entry start was seen: from then on every unit must fit
  bool synced = false;
  std::uint64_t sync_time = 0;
  if (skipped != nullptr) *skipped = 0;
  for (std::size_t off = 0; off < whole; off += kUnitBytes) {
    const std::uint64_t unit = load_unit(bytes, off);
    if (unit == 0) continue;
    switch (tag_of(unit)) {
      case kTagSync:
        started = synced = true;
        sync_time = unit & kTimeMask;
        break;
      case kTagContinuation:
        if (started) return corrupt_at(off, "continuation unit without an event");
        if (skipped != nullptr) *skipped = off + kUnitBytes;
        break;
      case kTagEvent: {
        started = true;
        CallEvent ev;
        ev.exit = (unit & kExitBit) != 0;
        ev.function = unit & kAddressMask;
        ev.offset = off;
        std::uint64_t delta = (unit >> kDeltaShift) & (kLowDeltaLimit - 1);
        if (unit & kContinuedBit) {
          if (off + kUnitBytes >= whole)
            return corrupt_at(off, "event cut off at its continuation");
          const std::uint64_t next = load_unit(bytes, off + kUnitBytes);
          if (tag_of(next) != kTagContinuation) {
            return corrupt_at(off + kUnitBytes, "event without its continuation unit");
          }
          off += kUnitBytes;
          ev.call_site = next & kAddressMask;
          delta |= ((next >> kDeltaShift) & ((std::uint64_t{1} << kHighDeltaBits) - 1))
                   << kLowDeltaBits;
        }
        ev.timed = synced;
        ev.time = synced ? sync_time + delta : delta;
        out.push_back(ev);
        break;
      }
      default:
        return corrupt_at(off, "unit with tag 00 is not padding");
    }
  }
  if (whole != bytes.size()) return corrupt_at(whole, "window is not a multiple of 8 bytes");
  return {};
}

std::vector<CallEvent> call_stack_after(std::span<const CallEvent> events) {
  std::vector<CallEvent> stack;
  for (const CallEvent& ev : events) {
    if (!ev.exit) {
      stack.push_back(ev);
      continue;
    }
    const auto frame = std::find_if(stack.rbegin(), stack.rend(),
                                    [&](const CallEvent& f) { return f.function == ev.function; });
    if (frame != stack.rend()) stack.erase(std::prev(frame.base()), stack.end());
  }
  return stack;
}

namespace {

class CalltraceDecoder final : public AuxDecoder {
 public:
  const char* format() const override { return "calltrace"; }

  Expected<void> decode(std::span<const std::uint8_t> bytes, std::string_view indent,
                        std::string& out) const override {
    std::vector<CallEvent> events;
    std::uint64_t skipped = 0;
    Expected<void> decoded = decode_calltrace(bytes, events, &skipped);
    char line[128];
    std::snprintf(line, sizeof line,
                  "calltrace: %zu events in %zu bytes (%" PRIu64 " bytes before the first entry)",
                  events.size(), bytes.size(), skipped);
    out.append(indent);
    out += line;
    out += '\n';
    list_calls(events, indent, out);
    list_stack(call_stack_after(events), indent, out);
    return decoded;
  }

 private:
  void append_event(const CallEvent& ev, std::string& out) const {
    append_address(out, ev.function, symbolize_, symbolize_context_);
    if (ev.call_site != 0) {
      out += "  from ";
      append_address(out, ev.call_site, symbolize_, symbolize_context_);
    }
  }

  // One line per event, indented by call depth (calls entered before the window make the depth
  // start above 0: the lowest depth reached is the left margin).
  void list_calls(const std::vector<CallEvent>& events, std::string_view indent,
                  std::string& out) const {
    long depth = 0;
    long lowest = 0;
    for (const CallEvent& ev : events) {
      if (ev.exit)
        lowest = std::min(lowest, --depth);
      else
        ++depth;
    }
    depth = -lowest;
    for (const CallEvent& ev : events) {
      if (ev.exit) --depth;
      out.append(indent);
      out += "  ";
      if (ev.timed)
        append_time(out, ev.time);
      else
        out += "?";
      out.append(static_cast<std::size_t>(1 + 2 * std::min(depth, 64L)), ' ');
      out += ev.exit ? "<- " : "-> ";
      append_event(ev, out);
      out += '\n';
      if (!ev.exit) ++depth;
    }
  }

  void list_stack(const std::vector<CallEvent>& stack, std::string_view indent,
                  std::string& out) const {
    out.append(indent);
    out += "call stack at the end (innermost first):";
    if (stack.empty()) out += " empty";
    out += '\n';
    for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
      out.append(indent);
      out += "  ";
      append_event(*it, out);
      out += '\n';
    }
  }
};

}  // namespace

std::unique_ptr<AuxDecoder> make_calltrace_decoder() {
  return std::make_unique<CalltraceDecoder>();
}

}  // namespace userperf::trace
