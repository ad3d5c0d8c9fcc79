// The feature sections userperf writes and reads, as parsed values, and their body encodings
// (tools/perf/util/header.c write_* / process_* in perf 6.1).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "support/expected.hpp"

namespace userperf::perfdata {

struct NrCpus {
  std::uint32_t available = 0;  // perf: nr_cpus_avail (highest present CPU + 1)
  std::uint32_t online = 0;
};

// PMU_MAPPINGS entry: the attr.type value a PMU was given and its name ("cpu", "software",
// userperf's own "calltrace" ...). userperf's PMU types are dynamic, so a reader must use this.
struct PmuMapping {
  std::uint32_t type = 0;
  std::string name;
};

// GROUP_DESC entry: attrs [leader, leader + members) form one group (members follow their
// leader in attr order, as perf requires). An AUX-sampling event's leader is its AUX event.
struct GroupDesc {
  std::string name;  // "{anon_group}" for perf's unnamed groups
  std::uint32_t leader = 0;
  std::uint32_t members = 0;  // leader included
};

// EVENT_DESC entry: an attr's name (what perf shows instead of "unknown attr type: N" for
// userperf's PMUs) with the attr and the ids that tie records to it (perf matches names by id).
struct EventDesc {
  std::vector<std::uint8_t> attr;  // the attr as written (every entry the same size)
  std::string name;
  std::vector<std::uint64_t> ids;
};

// BUILD_ID entry (perf's perf_record_header_build_id): the GNU build id of a file that records
// name. userperf writes pid -1 (perf's host machine) and misc PERF_RECORD_MISC_USER.
struct BuildIdEntry {
  std::int32_t pid = -1;
  std::uint16_t misc = 0;
  std::vector<std::uint8_t> id;  // 1 to 20 bytes
  std::string filename;
};

struct Features {
  std::optional<std::string> hostname;
  std::optional<std::string> osrelease;
  std::optional<std::string> version;
  std::optional<std::string> arch;
  std::optional<NrCpus> nrcpus;
  std::optional<std::vector<std::string>> cmdline;
  std::optional<std::vector<PmuMapping>> pmu_mappings;
  std::optional<std::vector<GroupDesc>> groups;
  std::optional<std::vector<EventDesc>> event_desc;
  std::optional<std::vector<BuildIdEntry>> build_ids;
  // TRACING_DATA as an opaque body (perf's tracing data: headers, formats, kallsyms ...).
  std::optional<std::vector<std::uint8_t>> tracing_data;

  // This machine and process: uname, CPU counts, /proc/self/cmdline, "userperf <version>".
  static Features of_this_host();
  // The PMU name for an attr.type, or nullptr.
  const std::string* pmu_name(std::uint32_t type) const;
  // The group holding attr `index`, or nullptr.
  const GroupDesc* group_of(std::uint32_t index) const;
};

// The GNU build id (NT_GNU_BUILD_ID note) of the ELF file at `path`, read with libelf; empty when
// the file is missing, not ELF or has none. At most 20 bytes (perf's limit) are kept.
std::vector<std::uint8_t> read_build_id(const std::string& path);

// Feature bits present in `features`, ascending, and each one's body.
struct FeatureBody {
  int feature = 0;
  std::vector<std::uint8_t> bytes;
};
std::vector<FeatureBody> encode_features(const Features& features);

// Parses the body of feature `feature` (at file offset `offset`) into `out`; unknown features are
// ignored. A malformed body is malformed_at its offset.
Expected<void> decode_feature(int feature, std::span<const std::uint8_t> body, std::uint64_t offset,
                              Features& out);

// Checks groups against the attr count: in bounds, ascending, not overlapping, two or more members
// (perf's process_group_desc rebuilds groups by walking attrs in that order).
Expected<void> check_groups(const std::vector<GroupDesc>& groups, std::size_t nr_attrs);

}  // namespace userperf::perfdata
