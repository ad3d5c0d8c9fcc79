// Writes a small perf.data of frames that kernel perf records now and then and that a report must
// still name as perf does: a frame-pointer walk that ran off the stack into text (a non-canonical
// "return address" made of ASCII bytes, as a sample inside printf gives), code that no MMAP
// announced (a leaf, and a caller in the middle of a chain), a low address and address zero. The
// named frames are functions of the given executable (hotspots), mapped whole at a fixed base in a
// process named as the executable. Usage: report_edge_profile OUT.data EXECUTABLE MAIN_ADDR
// HOT_PARSE_ADDR COOL_CHECKSUM_ADDR (the addresses as `nm` prints them: link-time, hex).
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "perfdata/writer.hpp"
#include "unit/report/record_bytes.hpp"

namespace {

using userperf::report::testing::RecordBytes;
using userperf::report::testing::user_callchain_attr;
using userperf::report::testing::user_callchain_sample;

constexpr std::uint32_t kPid = 30000;
constexpr std::uint64_t kBase = 0x555555554000ULL;             // the executable (PIE) maps here
constexpr std::uint64_t kOffTheStack = 0x6f7220323434203aULL;  // ": 442 ro", little-endian
constexpr std::uint64_t kUnannouncedLeaf = 0x7f0000001000ULL;
constexpr std::uint64_t kUnannouncedCaller = 0x7f0000002005ULL;
constexpr std::uint64_t kLow = 0x1000ULL;

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: %s OUT.data EXECUTABLE MAIN HOT_PARSE COOL_CHECKSUM\n", argv[0]);
    return 2;
  }
  struct stat st {};
  if (stat(argv[2], &st) != 0) {
    std::perror(argv[2]);
    return 1;
  }
  const std::uint64_t main_fn = kBase + std::strtoull(argv[3], nullptr, 16);
  const std::uint64_t hot_parse = kBase + std::strtoull(argv[4], nullptr, 16);
  const std::uint64_t cool_checksum = kBase + std::strtoull(argv[5], nullptr, 16);

  auto writer = userperf::perfdata::Writer::create(argv[1]);
  if (!writer) {
    std::fprintf(stderr, "report_edge_profile: %s\n", writer.error().message.c_str());
    return 1;
  }
  const perf_event_attr attr = user_callchain_attr(1000000);
  (*writer)->add_attr(attr, {});
  const auto append = [&](const std::vector<std::uint8_t>& record) {
    if (!(*writer)->append(record)) {
      std::fprintf(stderr, "report_edge_profile: %s\n", (*writer)->error().message.c_str());
      std::exit(1);
    }
  };

  std::uint64_t time = 1;
  append(RecordBytes(PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC)
             .put(kPid)
             .put(kPid)
             .text(basename(argv[2]))
             .trailer(kPid, time++)
             .done());
  RecordBytes mmap(PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
  mmap.put(kPid).put(kPid).put(kBase).put((static_cast<std::uint64_t>(st.st_size) + 4095) &
                                          ~4095ULL);
  mmap.put(std::uint64_t{0});
  mmap.put(std::uint32_t{0}).put(std::uint32_t{0}).put(std::uint64_t{0}).put(std::uint64_t{0});
  mmap.put(std::uint32_t{PROT_READ | PROT_EXEC}).put(std::uint32_t{MAP_PRIVATE});
  append(mmap.text(argv[2]).trailer(kPid, time++).done());

  // Each chain leaf first; callers are return addresses (the instruction after a call).
  const auto sample = [&](int times, std::vector<std::uint64_t> frames) {
    for (int i = 0; i < times; ++i) {
      append(user_callchain_sample(kPid, time++, attr.sample_period, frames));
    }
  };
  sample(6, {hot_parse + 0x10, main_fn + 0x20});
  sample(3, {hot_parse + 0x10, main_fn + 0x20, kOffTheStack});
  sample(2, {cool_checksum + 0x8, kUnannouncedCaller, main_fn + 0x20});
  sample(1, {kUnannouncedLeaf, main_fn + 0x20});
  sample(1, {kLow});
  sample(1, {cool_checksum + 0x8, main_fn + 0x20});
  // Rows of one sample each, named and not, whose order perf decides by its sort keys alone.
  sample(1, {main_fn + 0x30});
  sample(1, {hot_parse + 0x10, main_fn + 0x20, 0});  // a zero the walk read as a return address
  if (!(*writer)->finish()) {
    std::fprintf(stderr, "report_edge_profile: %s\n", (*writer)->error().message.c_str());
    return 1;
  }
  return 0;
}
