// The perf.data on-disk structures of file mode (kernel-perf-spec §7.1–7.2), as perf 6.1 reads
// them. Integers are in the writer's byte order; only native-order files are supported.
#pragma once

#include <cstdint>

namespace userperf::perfdata {

// "PERFILE2" read as a little-endian u64.
inline constexpr std::uint64_t kMagic = 0x32454c4946524550ULL;

struct FileSection {
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
};

inline constexpr int kFeatureBits = 256;

struct FileHeader {
  std::uint64_t magic = kMagic;
  std::uint64_t size = sizeof(FileHeader);
  std::uint64_t attr_size = 0;  // attr.size + sizeof(FileSection): one perf_file_attr
  FileSection attrs;
  FileSection data;
  FileSection event_types;  // unused by perf since 2.6.3x; written as zero
  std::uint64_t adds_features[kFeatureBits / 64] = {};
};
static_assert(sizeof(FileHeader) == 104);

// Feature bit numbers (HEADER_* in tools/perf/util/header.h).
enum Feature : int {
  kFeatTracingData = 1,
  kFeatBuildId = 2,
  kFeatHostname = 3,
  kFeatOsRelease = 4,
  kFeatVersion = 5,
  kFeatArch = 6,
  kFeatNrCpus = 7,
  kFeatCpuDesc = 8,
  kFeatCpuId = 9,
  kFeatTotalMem = 10,
  kFeatCmdline = 11,
  kFeatEventDesc = 12,
  kFeatCpuTopology = 13,
  kFeatNumaTopology = 14,
  kFeatBranchStack = 15,
  kFeatPmuMappings = 16,
  kFeatGroupDesc = 17,
  kFeatAuxtrace = 18,
};
const char* feature_name(int feature);  // "HOSTNAME", ...; nullptr when unknown

// perf-tool record types (PERF_RECORD_USER_TYPE_START and up).
enum ToolRecord : std::uint32_t {
  kRecordHeaderAttr = 64,
  kRecordHeaderTracingData = 66,
  kRecordFinishedRound = 68,
  kRecordAuxtraceInfo = 70,
  kRecordAuxtrace = 71,
  kRecordHeaderMax = 87,  // newest type known to any perf (§7.2); perf 6.1 stops at 82
};

// Strings in feature bodies are {u32 len; char s[len]}, NUL-terminated and zero-padded to this.
inline constexpr std::uint32_t kStringAlign = 64;

}  // namespace userperf::perfdata
