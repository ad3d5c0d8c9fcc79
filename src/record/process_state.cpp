#include "record/process_state.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "abi/sample_layout.hpp"

namespace userperf::record {

namespace {

// A record being built: header, body, NUL-terminated string padded to 8, sample_id trailer.
class RecordBuilder {
 public:
  RecordBuilder(std::uint32_t type, std::uint16_t misc) {
    const perf_event_header header{type, misc, 0};
    put(&header, sizeof header);
  }
  template <class T>
  void put(const T& value) {
    put(&value, sizeof value);
  }
  void put(const void* p, std::size_t n) {
    const std::size_t at = bytes_.size();
    bytes_.resize(at + n);
    std::memcpy(bytes_.data() + at, p, n);
  }
  void put_string(const std::string& s) {
    put(s.c_str(), s.size() + 1);
    bytes_.resize(abi::align8(bytes_.size()), 0);
  }
  // The sample_id trailer in perf_event__synthesize's shape: pid/tid, time 0, id, cpu 0.
  void put_sample_id(const perf_event_attr& attr, std::uint64_t id, std::uint32_t pid,
                     std::uint32_t tid) {
    if (!attr.sample_id_all) return;
    const std::uint64_t type = attr.sample_type;
    if (type & PERF_SAMPLE_TID) {
      put(pid);
      put(tid);
    }
    if (type & PERF_SAMPLE_TIME) put(std::uint64_t{0});
    if (type & PERF_SAMPLE_ID) put(id);
    if (type & PERF_SAMPLE_STREAM_ID) put(id);
    if (type & PERF_SAMPLE_CPU) put(std::uint64_t{0});
    if (type & PERF_SAMPLE_IDENTIFIER) put(id);
  }
  std::vector<std::uint8_t>& finish() {
    const auto size = static_cast<std::uint16_t>(bytes_.size());
    std::memcpy(bytes_.data() + offsetof(perf_event_header, size), &size, sizeof size);
    return bytes_;
  }

 private:
  std::vector<std::uint8_t> bytes_;
};

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

bool write_comm(pid_t pid, pid_t tid, const perf_event_attr& attr, std::uint64_t id,
                perfdata::Writer& writer) {
  const std::string comm =
      read_line("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/comm");
  RecordBuilder r(PERF_RECORD_COMM, 0);
  r.put(static_cast<std::uint32_t>(pid));
  r.put(static_cast<std::uint32_t>(tid));
  r.put_string(comm.substr(0, 15));
  r.put_sample_id(attr, id, static_cast<std::uint32_t>(pid), static_cast<std::uint32_t>(tid));
  return writer.append(r.finish());
}

}  // namespace

bool synthesize_process(pid_t pid, const perf_event_attr& attr, std::uint64_t id,
                        perfdata::Writer& writer, SynthesisResult* result) {
  SynthesisResult counts;
  const std::string proc = "/proc/" + std::to_string(pid);
  // COMM for every thread.
  DIR* tasks = opendir((proc + "/task").c_str());
  if (tasks == nullptr) return false;
  std::vector<pid_t> tids;
  while (const dirent* d = readdir(tasks)) {
    if (d->d_name[0] != '.') tids.push_back(static_cast<pid_t>(std::atoi(d->d_name)));
  }
  closedir(tasks);
  for (const pid_t tid : tids) {
    if (!write_comm(pid, tid, attr, id, writer)) return false;
    ++counts.comms;
  }
  // MMAP2 for executable file mappings: start-end perms offset maj:min inode path.
  std::ifstream maps(proc + "/maps");
  if (!maps) return false;
  std::string line;
  while (std::getline(maps, line)) {
    std::uint64_t start = 0, end = 0, pgoff = 0, ino = 0;
    unsigned maj = 0, min = 0;
    char perms[5] = {};
    int path_at = 0;
    if (std::sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %" SCNu64 " %n",
                    &start, &end, perms, &pgoff, &maj, &min, &ino, &path_at) < 7) {
      continue;
    }
    if (perms[2] != 'x' || path_at <= 0 || static_cast<std::size_t>(path_at) >= line.size()) {
      continue;
    }
    const std::string path = line.substr(static_cast<std::size_t>(path_at));
    if (path.empty() || path[0] != '/') continue;  // [vdso], [stack], anonymous: nothing to read
    std::uint32_t prot = 0;
    if (perms[0] == 'r') prot |= 1;                       // PROT_READ
    if (perms[1] == 'w') prot |= 2;                       // PROT_WRITE
    prot |= 4;                                            // PROT_EXEC
    const std::uint32_t flags = perms[3] == 's' ? 1 : 2;  // MAP_SHARED : MAP_PRIVATE
    RecordBuilder r(PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
    r.put(static_cast<std::uint32_t>(pid));
    r.put(static_cast<std::uint32_t>(pid));
    r.put(start);
    r.put(end - start);
    r.put(pgoff);
    r.put(static_cast<std::uint32_t>(maj));
    r.put(static_cast<std::uint32_t>(min));
    r.put(ino);
    r.put(std::uint64_t{0});  // ino_generation
    r.put(prot);
    r.put(flags);
    r.put_string(path);
    r.put_sample_id(attr, id, static_cast<std::uint32_t>(pid), static_cast<std::uint32_t>(pid));
    if (!writer.append(r.finish())) return false;
    ++counts.mmaps;
  }
  if (result != nullptr) *result = counts;
  return true;
}

}  // namespace userperf::record
