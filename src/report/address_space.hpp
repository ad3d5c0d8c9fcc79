// What a profiled process had mapped where, rebuilt from MMAP/MMAP2 records, and which threads
// belong to which process under which command name (COMM, FORK, EXIT), in record time order.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>

namespace userperf::report {

struct Mapping {
  std::uint64_t start = 0, end = 0;  // [start, end)
  std::uint64_t pgoff = 0;           // file offset of start
  std::string path;
  // The path's number in its ProcessTable, the same for every mapping of the file in any process:
  // what caches of per-file answers (the report's locations) key on instead of the path.
  std::uint32_t file = 0;
};

// One process image's mappings. A new mapping replaces whatever it overlaps, as mmap(2) does.
class AddressSpace {
 public:
  void map(const Mapping& mapping);
  // fork: the child's space starts as the parent's.
  void copy_mappings(const AddressSpace& parent) {
    by_start_ = parent.by_start_;
    ++generation_;
  }
  // The mapping holding `address`, or nullptr.
  const Mapping* find(std::uint64_t address) const;
  // Changes with every map(): caches keyed on an address space (unwinders) compare it.
  std::uint64_t generation() const { return generation_; }
  std::uint64_t id() const { return id_; }

  explicit AddressSpace(std::uint64_t id) : id_(id) {}

 private:
  std::map<std::uint64_t, Mapping> by_start_;
  std::uint64_t generation_ = 0;
  std::uint64_t id_;
};

class ProcessTable {
 public:
  // Numbers the mapping's path (Mapping::file) and maps it. Anonymous code (named_by_perf_map:
  // a JIT's) is mapped as perf maps it, as the process's /tmp/perf-PID.map at pgoff = its start:
  // the "offset" of an address in it is the address, which is what the map lists.
  void on_mmap(std::uint32_t pid, Mapping mapping, std::uint32_t prot);
  // exec: the process gets an empty address space.
  void on_comm(std::uint32_t pid, std::uint32_t tid, const std::string& comm, bool exec);
  // A new process (pid != ppid) starts with a copy of its parent's mappings; a new thread shares
  // its process's. Either starts with its parent thread's command name.
  void on_fork(std::uint32_t pid, std::uint32_t ppid, std::uint32_t tid, std::uint32_t ptid);

  // The address space of `pid` (an empty one is created for a pid never seen).
  AddressSpace& space(std::uint32_t pid);
  // The command of thread `tid` of `pid`: its COMM, else its process's, else "swapper" for pid 0
  // (the idle task) and ":<tid>" for any other (perf's names for threads it knows nothing of).
  std::string command(std::uint32_t pid, std::uint32_t tid) const;
  // Changes whenever a COMM or FORK may have changed a thread's command: caches of command()
  // compare it.
  std::uint64_t command_generation() const { return command_generation_; }

 private:
  std::shared_ptr<AddressSpace> fresh_space();
  std::unordered_map<std::uint32_t, std::shared_ptr<AddressSpace>> spaces_;  // pid -> space
  std::unordered_map<std::uint32_t, std::string> comms_;                     // tid -> command
  std::unordered_map<std::string, std::uint32_t> files_;                     // path -> number
  std::uint64_t command_generation_ = 0;
  std::uint64_t next_space_id_ = 1;
};

}  // namespace userperf::report
