// The calltrace format: encoded events decode back exactly, a window starting at any 8-byte
// boundary resynchronises, and the call stack at a window's end is what led up to it.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <vector>

#include "trace/calltrace_format.hpp"
#include "trace/words.hpp"
#include "unit/trace/corrupt_offset.hpp"

namespace userperf::trace {
namespace {

struct Encoded {
  std::vector<std::uint8_t> bytes;
  std::vector<CallEvent> events;  // as encoded (offset = entry start, call_site 0 on exits)
};

// A random but well-nested run of calls: depth stays within [0, 12).
Encoded encode_run(std::uint32_t seed, int count, std::uint64_t start_time = 1'000'000'000) {
  std::mt19937_64 rng(seed);
  CalltraceEncoder encoder;
  Encoded out;
  std::vector<std::uint64_t> stack;
  std::uint64_t now = start_time;
  for (int i = 0; i < count; ++i) {
    // Mostly short gaps, sometimes long ones (which need the second unit or a new SYNC).
    const std::uint64_t r = rng() % 100;
    now += r < 80 ? rng() % 3000 : r < 95 ? rng() % 50'000'000 : rng() % 500'000'000;
    const bool exit = !stack.empty() && (stack.size() >= 12 || rng() % 2 == 0);
    CallEvent ev;
    ev.exit = exit;
    ev.time = now;
    ev.timed = true;
    if (exit) {
      ev.function = stack.back();
      stack.pop_back();
    } else {
      ev.function = 0x5555'0000'0000 + (rng() % 64) * 0x40;
      ev.call_site = rng() % 8 == 0 ? 0 : 0x5555'0000'1000 + rng() % 0x1000;
      stack.push_back(ev.function);
    }
    const CallEntry entry = encoder.encode(exit, ev.function, ev.call_site, now);
    encoder.commit(entry);
    ev.offset = out.bytes.size() + (entry.has_sync ? 8 : 0);
    const auto* p = reinterpret_cast<const std::uint8_t*>(entry.units);
    out.bytes.insert(out.bytes.end(), p, p + entry.bytes);
    out.events.push_back(ev);
  }
  return out;
}

void expect_same(const CallEvent& got, const CallEvent& want) {
  EXPECT_EQ(got.exit, want.exit);
  EXPECT_EQ(got.function, want.function);
  EXPECT_EQ(got.call_site, want.call_site);
  EXPECT_EQ(got.offset, want.offset);
  if (got.timed) {
    EXPECT_EQ(got.time, want.time);
  }
}

TEST(CalltraceFormat, RoundTrips) {
  const Encoded run = encode_run(1, 2000);
  std::vector<CallEvent> events;
  const Expected<void> decoded = decode_calltrace(run.bytes, events);
  ASSERT_TRUE(decoded) << decoded.error().message << " at " << decoded.error().offset;
  ASSERT_EQ(events.size(), run.events.size());
  for (std::size_t i = 0; i < events.size(); ++i) {
    EXPECT_TRUE(events[i].timed);
    expect_same(events[i], run.events[i]);
  }
}

TEST(CalltraceFormat, EventSizes) {
  CalltraceEncoder encoder;
  encoder.commit(encoder.encode(false, 0x1000, 0x2000, 100));  // first: SYNC + 2 units
  const CallEntry enter = encoder.encode(false, 0x1000, 0x2000, 200);
  const CallEntry exit = encoder.encode(true, 0x1000, 0x2000, 300);
  const CallEntry bare = encoder.encode(false, 0x1000, 0, 300);
  const CallEntry late_exit = encoder.encode(true, 0x1000, 0, 100 + 5000);
  EXPECT_EQ(enter.bytes, 16u);
  EXPECT_EQ(exit.bytes, 8u);
  EXPECT_EQ(bare.bytes, 8u);
  EXPECT_EQ(late_exit.bytes, 16u);  // delta past 12 bits: a SYNC, then the event in one unit
  EXPECT_TRUE(late_exit.has_sync);
  const CallEntry late_enter = encoder.encode(false, 0x1000, 0x2000, 100 + 5000);
  EXPECT_EQ(late_enter.bytes, 16u);  // the continuation carries the delta's high bits
  EXPECT_FALSE(late_enter.has_sync);
  const CallEntry far = encoder.encode(true, 0x1000, 0, 100 + (std::uint64_t{1} << 26));
  EXPECT_TRUE(far.has_sync);
  EXPECT_EQ(far.bytes, 16u);
}

TEST(CalltraceFormat, AverageBytesPerEvent) {
  // Calls a few hundred ns apart, as in instrumented code: enters with call sites, exits without.
  CalltraceEncoder encoder;
  std::uint64_t bytes = 0;
  std::uint64_t now = 1'000'000;
  constexpr int kPairs = 100'000;
  for (int i = 0; i < kPairs; ++i) {
    for (const bool exit : {false, true}) {
      now += 150;
      const CallEntry e = encoder.encode(exit, 0x401000, 0x402000, now);
      encoder.commit(e);
      bytes += e.bytes;
    }
  }
  const double per_event = static_cast<double>(bytes) / (2.0 * kPairs);
  std::printf("calltrace: %.2f bytes per event (enter 16, exit 8, SYNC every %llu bytes)\n",
              per_event, static_cast<unsigned long long>(CalltraceEncoder::kSyncInterval));
  // Enters 16, exits 8, plus a SYNC whenever an exit's delta passes 4 us.
  EXPECT_LE(per_event, 12.5);
  EXPECT_GE(per_event, 12.0);
}

TEST(CalltraceFormat, ResynchronisesAtAnyBoundary) {
  const Encoded run = encode_run(2, 400);
  for (std::size_t start = 0; start < run.bytes.size(); start += 8) {
    const std::span<const std::uint8_t> window(run.bytes.data() + start, run.bytes.size() - start);
    std::vector<CallEvent> events;
    const Expected<void> decoded = decode_calltrace(window, events);
    ASSERT_TRUE(decoded) << "start " << start << ": " << decoded.error().message;
    // The decoded events are exactly the encoded ones whose first unit is in the window.
    std::size_t first = 0;
    while (first < run.events.size() && run.events[first].offset < start) ++first;
    ASSERT_EQ(events.size(), run.events.size() - first) << "start " << start;
    for (std::size_t i = 0; i < events.size(); ++i) {
      CallEvent want = run.events[first + i];
      want.offset -= start;
      expect_same(events[i], want);
    }
    // Within kSyncInterval plus one entry of the start, the events are timed again.
    for (const CallEvent& ev : events) {
      if (ev.offset >= CalltraceEncoder::kSyncInterval + 24) {
        EXPECT_TRUE(ev.timed);
      }
    }
  }
}

TEST(CalltraceFormat, PaddingAndCorruption) {
  const Encoded run = encode_run(3, 50);
  auto padded = run.bytes;
  padded.insert(padded.begin(), 32, 0);
  padded.insert(padded.end(), 40, 0);
  std::vector<CallEvent> events;
  ASSERT_TRUE(decode_calltrace(padded, events));
  EXPECT_EQ(events.size(), run.events.size());

  auto corrupt = run.bytes;
  store_unit(corrupt.data() + 64, 0x0000'1234'0000'0000);  // tag 00, not zero
  events.clear();
  EXPECT_EQ(corrupt_offset(decode_calltrace(corrupt, events)), 64u);

  // An EVENT that announces a continuation at the very end.
  std::vector<std::uint8_t> cut(run.bytes.begin(), run.bytes.begin() + 8 * 3);
  const std::uint64_t lone = (std::uint64_t{1} << 62) | (std::uint64_t{1} << 60) | 0x1000;
  cut.resize(cut.size() + 8);
  store_unit(cut.data() + cut.size() - 8, lone);
  events.clear();
  EXPECT_EQ(corrupt_offset(decode_calltrace(cut, events)), cut.size() - 8);
}

TEST(CalltraceFormat, CallStackAfterAWindow) {
  auto ev = [](bool exit, std::uint64_t fn, std::uint64_t site = 0) {
    CallEvent e;
    e.exit = exit;
    e.function = fn;
    e.call_site = site;
    return e;
  };
  // x was entered before the window: its exit is ignored.
  const std::vector<CallEvent> events = {ev(true, 0x10),    ev(false, 0xa, 1), ev(false, 0xb, 2),
                                         ev(false, 0xc, 3), ev(true, 0xc),     ev(false, 0xd, 4),
                                         ev(false, 0xe, 5), ev(true, 0xd)};  // e lost its exit
  const auto stack = call_stack_after(events);
  ASSERT_EQ(stack.size(), 2u);
  EXPECT_EQ(stack[0].function, 0xau);
  EXPECT_EQ(stack[1].function, 0xbu);
  EXPECT_EQ(stack[1].call_site, 2u);
}

std::string symbolize(std::uint64_t address, void* context) {
  (void)context;
  if (address == 0x5000) return "alpha";
  if (address == 0x6000) return "beta";
  return {};
}

TEST(CalltraceFormat, TextShowsCallsAndTheStack) {
  CalltraceEncoder encoder;
  std::vector<std::uint8_t> bytes;
  auto put = [&](bool exit, std::uint64_t fn, std::uint64_t site, std::uint64_t t) {
    const CallEntry e = encoder.encode(exit, fn, site, t);
    encoder.commit(e);
    const auto* p = reinterpret_cast<const std::uint8_t*>(e.units);
    bytes.insert(bytes.end(), p, p + e.bytes);
  };
  put(false, 0x5000, 0x4444, 1'000'000'000);
  put(false, 0x6000, 0x5010, 1'000'000'500);
  put(true, 0x6000, 0, 1'000'000'900);
  auto decoder = make_decoder("calltrace");
  ASSERT_NE(decoder, nullptr);
  decoder->set_symbolizer(symbolize, nullptr);
  std::string out;
  ASSERT_TRUE(decoder->decode(bytes, "| ", out));
  EXPECT_NE(out.find("| calltrace: 3 events"), std::string::npos) << out;
  EXPECT_NE(out.find("1.000000000 -> alpha  from 0x4444\n"), std::string::npos) << out;
  EXPECT_NE(out.find("1.000000500   -> beta  from 0x5010\n"), std::string::npos) << out;
  EXPECT_NE(out.find("1.000000900   <- beta\n"), std::string::npos) << out;
  EXPECT_NE(out.find("(innermost first):\n|   alpha  from 0x4444\n"), std::string::npos) << out;
}

}  // namespace
}  // namespace userperf::trace
