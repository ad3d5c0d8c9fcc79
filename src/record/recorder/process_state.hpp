// The state of a process as perf record synthesizes it (perf_event__synthesize_comm / _fork /
// _mmap_events): COMM, FORK and EXIT records, and an MMAP2 record for each executable file mapping
// of /proc/PID/maps, and for anonymous code as "//anon", so that perf report and perf script can
// name the samples' code (a JIT's from its /tmp/perf-PID.map). Each record carries the sample_id
// trailer the attr asks for, with the time and id of SyntheticStamp.
#pragma once

#include <linux/perf_event.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "perfdata/writer.hpp"

namespace userperf::record {

// What goes into a synthesized record's sample_id trailer besides the pid/tid it is about.
struct SyntheticStamp {
  std::uint64_t time = 0;  // 0: before every sample
  std::uint64_t id = 0;
};

// The name of an anonymous executable mapping (JIT code) in an MMAP2 record, the kernel's.
inline constexpr const char* kAnonymousMapping = "//anon";

// One file mapping of /proc/PID/maps: executable, or read-only (perf's data mappings); or an
// anonymous executable one, named kAnonymousMapping.
struct FileMapping {
  std::uint64_t start = 0, length = 0, pgoff = 0, inode = 0;
  std::uint32_t major = 0, minor = 0, prot = 0, flags = 0;
  std::string path;
  bool operator==(const FileMapping&) const = default;
};

// The executable and read-only file mappings of `pid`, [vdso], and its anonymous executable
// mappings as "//anon" at pgoff = their start (writable or unreadable data, anonymous data,
// [heap] and [stack] left out).
// False when /proc/PID/maps cannot be read.
bool read_file_mappings(pid_t pid, std::vector<FileMapping>& out);
// /proc/PID/task/TID/comm without its newline ("" when gone).
std::string read_comm(pid_t pid, pid_t tid);
// When the process started (/proc/PID/stat's starttime, in clock ticks after boot): exec keeps
// it, a new process that reuses the pid has another. 0 when the process is gone.
std::uint64_t read_start_time(pid_t pid);
// Whether `pid` is still the process that started at `start_time` and has not exited (a zombie
// has).
bool process_running(pid_t pid, std::uint64_t start_time);

// Single records, shaped for `attr` (sample_id_all). misc: PERF_RECORD_MISC_COMM_EXEC for a COMM
// after exec. False when the writer failed (its error says why).
bool write_comm(pid_t pid, pid_t tid, const std::string& comm, std::uint16_t misc,
                const perf_event_attr& attr, const SyntheticStamp& stamp, perfdata::Writer& writer);
bool write_mmap2(pid_t pid, const FileMapping& mapping, const perf_event_attr& attr,
                 const SyntheticStamp& stamp, perfdata::Writer& writer);
// PERF_RECORD_FORK or PERF_RECORD_EXIT: {pid, ppid, tid, ptid, time}.
bool write_task(std::uint32_t type, pid_t pid, pid_t ppid, pid_t tid, pid_t ptid,
                const perf_event_attr& attr, const SyntheticStamp& stamp, perfdata::Writer& writer);

// PERF_RECORD_LOST_SAMPLES: {lost}, as perf record writes an event's PERF_FORMAT_LOST count at its
// end. The stamp's id names the event.
bool write_lost_samples_record(pid_t pid, pid_t tid, std::uint64_t lost,
                               const perf_event_attr& attr, const SyntheticStamp& stamp,
                               perfdata::Writer& writer);

struct SynthesisResult {
  std::uint32_t comms = 0;
  std::uint32_t mmaps = 0;
  std::vector<FileMapping> mappings;  // the ones written
};

// Writes COMM for every thread of `pid` and MMAP2 for its executable mappings into `writer`. False
// when /proc/PID cannot be read or the writer failed (its error says why).
bool synthesize_process(pid_t pid, const perf_event_attr& attr, const SyntheticStamp& stamp,
                        perfdata::Writer& writer, SynthesisResult* result = nullptr);
// The same with time 0 (a process sampled from its start, trace-demo's).
inline bool synthesize_process(pid_t pid, const perf_event_attr& attr, std::uint64_t id,
                               perfdata::Writer& writer, SynthesisResult* result = nullptr) {
  return synthesize_process(pid, attr, SyntheticStamp{0, id}, writer, result);
}

}  // namespace userperf::record
