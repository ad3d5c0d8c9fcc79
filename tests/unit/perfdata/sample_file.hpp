// The file the perf-compatibility and script tests share: a type-8 AUX leader ("calltrace") with
// an AUX-sampling cpu-clock sibling (GROUP_DESC), COMM and MMAP2 of this test binary at its real
// load address, samples whose IP is sample_file_marker(), AUX records with every flag,
// ITRACE_START, LOST_SAMPLES and FINISHED_ROUND.
#pragma once

#include <linux/perf_event.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "perfdata/writer.hpp"
#include "unit/perfdata/records.hpp"

namespace userperf::perfdata::testing {

inline constexpr std::uint32_t kAuxPmuType = 8;
inline constexpr std::uint64_t kLeaderId = 1001;
inline constexpr std::uint64_t kSiblingId = 1002;

extern "C" inline __attribute__((noinline, used)) int sample_file_marker(int x) {
  asm volatile("" ::: "memory");
  return x * 3 + 1;
}

struct ExecMapping {
  std::uint64_t start = 0, end = 0, pgoff = 0;
  std::string path;
};

// The executable mapping of this binary that holds sample_file_marker.
inline ExecMapping marker_mapping() {
  const auto marker = reinterpret_cast<std::uint64_t>(&sample_file_marker);
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    std::istringstream in(line);
    std::string range, perms, offset, dev, inode, path;
    in >> range >> perms >> offset >> dev >> inode >> path;
    ExecMapping m;
    m.start = std::stoull(range.substr(0, range.find('-')), nullptr, 16);
    m.end = std::stoull(range.substr(range.find('-') + 1), nullptr, 16);
    m.pgoff = std::stoull(offset, nullptr, 16);
    m.path = path;
    if (marker >= m.start && marker < m.end && perms.find('x') != std::string::npos) return m;
  }
  return {};
}

inline perf_event_attr leader_attr() {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = kAuxPmuType;
  attr.sample_type = kSampleType;
  attr.sample_id_all = 1;
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  return attr;
}

inline perf_event_attr sibling_attr() {
  perf_event_attr attr = leader_attr();
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.sample_period = 100000;
  attr.sample_type = kSampleType | PERF_SAMPLE_AUX;
  attr.aux_sample_size = 4096;
  attr.disabled = 0;
  return attr;
}

inline std::vector<std::uint8_t> aux_bytes(std::size_t n) {
  std::vector<std::uint8_t> bytes(n);
  for (std::size_t i = 0; i < n; ++i) bytes[i] = static_cast<std::uint8_t>(i * 7 + 1);
  return bytes;
}

// Writes the file; empty string on success, else the writer's error.
inline std::string write_sample_file(const std::string& path) {
  auto created = Writer::create(path);
  if (!created) return created.error().message;
  Writer* writer = created->get();
  const std::uint64_t leader_ids[] = {kLeaderId};
  const std::uint64_t sibling_ids[] = {kSiblingId};
  writer->add_attr(leader_attr(), leader_ids);
  writer->add_attr(sibling_attr(), sibling_ids);
  const ExecMapping m = marker_mapping();
  const auto pid = static_cast<std::uint32_t>(getpid());
  const Trailer leader{pid, pid, 1000, kLeaderId};
  const Trailer sibling{pid, pid, 1000, kSiblingId};
  const auto ip = reinterpret_cast<std::uint64_t>(&sample_file_marker);
  writer->append(comm_record(sibling, "perfdata-test"));
  writer->append(mmap2_record(sibling, m.start, m.end - m.start, m.pgoff, m.path));
  writer->append(itrace_start_record(Trailer{pid, pid, 1100, kLeaderId}));
  const std::uint64_t all_flags[] = {0,
                                     PERF_AUX_FLAG_TRUNCATED,
                                     PERF_AUX_FLAG_OVERWRITE,
                                     PERF_AUX_FLAG_PARTIAL,
                                     PERF_AUX_FLAG_COLLISION,
                                     PERF_AUX_FLAG_TRUNCATED | PERF_AUX_FLAG_OVERWRITE |
                                         PERF_AUX_FLAG_PARTIAL | PERF_AUX_FLAG_COLLISION};
  std::uint64_t time = 2000;
  for (std::uint64_t flags : all_flags) {
    Trailer t = leader;
    t.time = time;
    writer->append(aux_record(t, time * 8, 512, flags));
    Trailer s = sibling;
    s.time = time + 1;
    writer->append(sample_record(s, ip, 100000, true, aux_bytes(flags == 0 ? 0 : 64)));
    time += 1000;
  }
  writer->append_finished_round();
  Trailer plain = sibling;
  plain.time = time;
  writer->append(sample_record(plain, ip + 1, 100000, true));
  writer->append(lost_samples_record(plain, 3));
  writer->set_event_name(0, "calltrace");  // EVENT_DESC: what perf shows for the AUX leader
  Features& f = writer->features();
  f = Features::of_this_host();
  f.pmu_mappings =
      std::vector<PmuMapping>{{PERF_TYPE_SOFTWARE, "software"}, {kAuxPmuType, "calltrace"}};
  f.groups = std::vector<GroupDesc>{{"{anon_group}", 0, 2}};
  if (!writer->finish()) return writer->error().message;
  return {};
}

}  // namespace userperf::perfdata::testing
