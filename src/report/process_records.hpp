// Bodies of the records that describe processes (MMAP, MMAP2, COMM, FORK, EXIT), decoded from
// untrusted bytes: false when a field runs past the record.
#pragma once

#include <cstdint>
#include <string>

#include "perfdata/reader.hpp"

namespace userperf::report {

struct MmapRecord {
  std::uint32_t pid = 0, tid = 0;
  std::uint64_t start = 0, len = 0, pgoff = 0;
  // PROT_*: an MMAP2's own; an MMAP record's PROT_READ | PROT_EXEC, PROT_READ for data.
  std::uint32_t prot = 0;
  std::string path;
};

struct CommRecord {
  std::uint32_t pid = 0, tid = 0;
  bool exec = false;  // PERF_RECORD_MISC_COMM_EXEC: the process image was replaced
  std::string comm;
};

// FORK and EXIT share their layout.
struct TaskRecord {
  std::uint32_t pid = 0, ppid = 0, tid = 0, ptid = 0;
};

bool decode_mmap(const perfdata::RecordView& record, MmapRecord& out);
bool decode_comm(const perfdata::RecordView& record, CommRecord& out);
bool decode_task(const perfdata::RecordView& record, TaskRecord& out);

class ProcessTable;

// MMAP, MMAP2, COMM and FORK: the records that change a ProcessTable.
bool is_process_record(std::uint32_t type);
// Replays one such record into `processes` (what the report and the script both do). False when
// its body is truncated; a record of another type changes nothing.
bool replay_process_record(ProcessTable& processes, const perfdata::RecordView& record);

}  // namespace userperf::report
