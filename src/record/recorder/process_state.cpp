#include "record/recorder/process_state.hpp"

#include <dirent.h>
#include <sys/stat.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/byte_writer.hpp"

namespace userperf::record {

namespace {

// A record being built: header, body, NUL-terminated string padded to 8, sample_id trailer.
class RecordBuilder {
 public:
  RecordBuilder(std::uint32_t type, std::uint16_t misc) {
    out_.put(perf_event_header{type, misc, 0});
  }
  RecordBuilder(const RecordBuilder&) = delete;  // out_ refers to bytes_
  RecordBuilder& operator=(const RecordBuilder&) = delete;
  template <class T>
  void put(const T& value) {
    out_.put(value);
  }
  void put_string(const std::string& s) {
    out_.put_bytes(s.c_str(), s.size() + 1);
    out_.align(8);
  }
  // The sample_id trailer in perf_event__synthesize's shape: pid/tid, time, id, cpu 0.
  void put_sample_id(const perf_event_attr& attr, const SyntheticStamp& stamp, std::uint32_t pid,
                     std::uint32_t tid) {
    if (!attr.sample_id_all) return;
    const std::uint64_t type = attr.sample_type;
    if (type & PERF_SAMPLE_TID) {
      put(pid);
      put(tid);
    }
    if (type & PERF_SAMPLE_TIME) put(stamp.time);
    if (type & PERF_SAMPLE_ID) put(stamp.id);
    if (type & PERF_SAMPLE_STREAM_ID) put(stamp.id);
    if (type & PERF_SAMPLE_CPU) put(std::uint64_t{0});
    if (type & PERF_SAMPLE_IDENTIFIER) put(stamp.id);
  }
  std::vector<std::uint8_t>& finish() {
    out_.patch(offsetof(perf_event_header, size), static_cast<std::uint16_t>(bytes_.size()));
    return bytes_;
  }

 private:
  std::vector<std::uint8_t> bytes_;
  support::ByteWriter out_{bytes_};
};

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

std::string read_comm(pid_t pid, pid_t tid) {
  return read_line("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/comm");
}

std::uint64_t read_start_time(pid_t pid) {
  const std::string stat = read_line("/proc/" + std::to_string(pid) + "/stat");
  // The command (field 2) is in parentheses and may hold spaces and ')': fields count from the
  // last ')'. starttime is field 22, the 20th after it.
  const std::size_t close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(stat.substr(close + 1));
  std::string field;
  for (int i = 0; i < 20 && fields >> field; ++i) {
  }
  std::uint64_t start = 0;
  return fields && std::sscanf(field.c_str(), "%" SCNu64, &start) == 1 ? start : 0;
}

bool process_running(pid_t pid, std::uint64_t start_time) {
  const std::string stat = read_line("/proc/" + std::to_string(pid) + "/stat");
  const std::size_t close = stat.rfind(')');
  if (close == std::string::npos || close + 2 >= stat.size()) return false;
  const char state = stat[close + 2];
  return state != 'Z' && state != 'X' && read_start_time(pid) == start_time;
}

bool write_comm(pid_t pid, pid_t tid, const std::string& comm, std::uint16_t misc,
                const perf_event_attr& attr, const SyntheticStamp& stamp,
                perfdata::Writer& writer) {
  RecordBuilder r(PERF_RECORD_COMM, misc);
  r.put(static_cast<std::uint32_t>(pid));
  r.put(static_cast<std::uint32_t>(tid));
  r.put_string(comm.substr(0, 15));
  r.put_sample_id(attr, stamp, static_cast<std::uint32_t>(pid), static_cast<std::uint32_t>(tid));
  return writer.append(r.finish());
}

bool write_task(std::uint32_t type, pid_t pid, pid_t ppid, pid_t tid, pid_t ptid,
                const perf_event_attr& attr, const SyntheticStamp& stamp,
                perfdata::Writer& writer) {
  RecordBuilder r(type, 0);
  r.put(static_cast<std::uint32_t>(pid));
  r.put(static_cast<std::uint32_t>(ppid));
  r.put(static_cast<std::uint32_t>(tid));
  r.put(static_cast<std::uint32_t>(ptid));
  r.put(stamp.time);
  r.put_sample_id(attr, stamp, static_cast<std::uint32_t>(pid), static_cast<std::uint32_t>(tid));
  return writer.append(r.finish());
}

bool write_lost_samples_record(pid_t pid, pid_t tid, std::uint64_t lost,
                               const perf_event_attr& attr, const SyntheticStamp& stamp,
                               perfdata::Writer& writer) {
  RecordBuilder r(PERF_RECORD_LOST_SAMPLES, 0);
  r.put(lost);
  r.put_sample_id(attr, stamp, static_cast<std::uint32_t>(pid), static_cast<std::uint32_t>(tid));
  return writer.append(r.finish());
}

bool write_mmap2(pid_t pid, const FileMapping& m, const perf_event_attr& attr,
                 const SyntheticStamp& stamp, perfdata::Writer& writer) {
  // A mapping without PROT_EXEC is a data mapping to perf (perf record -d's MISC_MMAP_DATA).
  const std::uint16_t misc =
      PERF_RECORD_MISC_USER | ((m.prot & 4) ? 0 : PERF_RECORD_MISC_MMAP_DATA);
  RecordBuilder r(PERF_RECORD_MMAP2, misc);
  r.put(static_cast<std::uint32_t>(pid));
  r.put(static_cast<std::uint32_t>(pid));
  r.put(m.start);
  r.put(m.length);
  r.put(m.pgoff);
  r.put(m.major);
  r.put(m.minor);
  r.put(m.inode);
  r.put(std::uint64_t{0});  // ino_generation
  r.put(m.prot);
  r.put(m.flags);
  r.put_string(m.path);
  r.put_sample_id(attr, stamp, static_cast<std::uint32_t>(pid), static_cast<std::uint32_t>(pid));
  return writer.append(r.finish());
}

bool read_file_mappings(pid_t pid, std::vector<FileMapping>& out) {
  // start-end perms offset maj:min inode path
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  if (!maps) return false;
  out.clear();
  std::string line;
  while (std::getline(maps, line)) {
    FileMapping m;
    std::uint64_t end = 0;
    char perms[5] = {};
    int path_at = 0;
    if (std::sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %" SCNu64 " %n",
                    &m.start, &end, perms, &m.pgoff, &m.major, &m.minor, &m.inode, &path_at) < 7) {
      continue;
    }
    // Code, and the read-only parts of the same files: a DWARF unwinder (perf's, for
    // --call-graph dwarf) reads .eh_frame_hdr through the mapping that holds it, which is not
    // the executable one. Writable and unreadable mappings are left out.
    const bool exec = perms[2] == 'x';
    if (!exec && (perms[0] != 'r' || perms[1] == 'w')) continue;
    if (path_at > 0 && static_cast<std::size_t>(path_at) < line.size()) {
      m.path = line.substr(static_cast<std::size_t>(path_at));
    }
    if (m.path.empty() || m.path.starts_with("[anon:")) {
      // Anonymous code (a JIT's): named "//anon" at pgoff = its address, as the kernel's
      // perf_event_mmap names it (a prctl name is not used), so that perf report looks its
      // samples up in /tmp/perf-PID.map. Anonymous data is left out, as perf record leaves it.
      if (!exec) continue;
      m.path = kAnonymousMapping;
      m.pgoff = m.start;
    } else if (m.path[0] != '/' && m.path != "[vdso]") {
      // Files, and [vdso] (perf reads its own copy of the kernel's); not [stack] or [heap].
      continue;
    }
    m.length = end - m.start;
    if (perms[0] == 'r') m.prot |= 1;   // PROT_READ
    if (perms[1] == 'w') m.prot |= 2;   // PROT_WRITE
    if (exec) m.prot |= 4;              // PROT_EXEC
    m.flags = perms[3] == 's' ? 1 : 2;  // MAP_SHARED : MAP_PRIVATE
    out.push_back(std::move(m));
  }
  return true;
}

bool synthesize_process(pid_t pid, const perf_event_attr& attr, const SyntheticStamp& stamp,
                        perfdata::Writer& writer, SynthesisResult* result) {
  SynthesisResult counts;
  // COMM for every thread.
  DIR* tasks = opendir(("/proc/" + std::to_string(pid) + "/task").c_str());
  if (tasks == nullptr) return false;
  std::vector<pid_t> tids;
  while (const dirent* d = readdir(tasks)) {
    if (d->d_name[0] != '.') tids.push_back(static_cast<pid_t>(std::atoi(d->d_name)));
  }
  closedir(tasks);
  for (const pid_t tid : tids) {
    if (!write_comm(pid, tid, read_comm(pid, tid), 0, attr, stamp, writer)) return false;
    ++counts.comms;
  }
  if (!read_file_mappings(pid, counts.mappings)) return false;
  for (const FileMapping& m : counts.mappings) {
    if (!write_mmap2(pid, m, attr, stamp, writer)) return false;
    ++counts.mmaps;
  }
  if (result != nullptr) *result = std::move(counts);
  return true;
}

}  // namespace userperf::record
