#include "report/address_space.hpp"

#include "report/perf_map.hpp"

namespace userperf::report {

void AddressSpace::map(const Mapping& mapping) {
  if (mapping.end <= mapping.start) return;
  ++generation_;
  // Cut every mapping that overlaps [start, end): keep its parts outside the range.
  auto it = by_start_.lower_bound(mapping.start);
  if (it != by_start_.begin() && std::prev(it)->second.end > mapping.start) --it;
  while (it != by_start_.end() && it->first < mapping.end) {
    Mapping old = it->second;
    it = by_start_.erase(it);
    if (old.start < mapping.start) {
      Mapping head = old;
      head.end = mapping.start;
      by_start_.emplace(head.start, head);
    }
    if (old.end > mapping.end) {
      Mapping tail = old;
      tail.pgoff += mapping.end - old.start;
      tail.start = mapping.end;
      it = by_start_.emplace(tail.start, tail).first;
      ++it;
    }
  }
  by_start_.emplace(mapping.start, mapping);
}

const Mapping* AddressSpace::find(std::uint64_t address) const {
  auto it = by_start_.upper_bound(address);
  if (it == by_start_.begin()) return nullptr;
  --it;
  return address < it->second.end ? &it->second : nullptr;
}

std::shared_ptr<AddressSpace> ProcessTable::fresh_space() {
  return std::make_shared<AddressSpace>(next_space_id_++);
}

AddressSpace& ProcessTable::space(std::uint32_t pid) {
  auto& slot = spaces_[pid];
  if (!slot) slot = fresh_space();
  return *slot;
}

void ProcessTable::on_mmap(std::uint32_t pid, Mapping mapping, std::uint32_t prot) {
  if (named_by_perf_map(mapping.path, prot)) {
    mapping.path = perf_map_path(pid);
    mapping.pgoff = mapping.start;
  }
  mapping.file =
      files_.try_emplace(mapping.path, static_cast<std::uint32_t>(files_.size())).first->second;
  space(pid).map(mapping);
}

void ProcessTable::on_comm(std::uint32_t pid, std::uint32_t tid, const std::string& comm,
                           bool exec) {
  comms_[tid] = comm;
  ++command_generation_;
  if (exec) spaces_[pid] = fresh_space();
}

void ProcessTable::on_fork(std::uint32_t pid, std::uint32_t ppid, std::uint32_t tid,
                           std::uint32_t ptid) {
  if (auto parent = comms_.find(ptid); parent != comms_.end()) comms_[tid] = parent->second;
  ++command_generation_;
  if (pid == ppid) return;  // a thread: same process, same space
  auto parent = spaces_.find(ppid);
  auto copy = fresh_space();
  if (parent != spaces_.end() && parent->second) copy->copy_mappings(*parent->second);
  spaces_[pid] = copy;
}

std::string ProcessTable::command(std::uint32_t pid, std::uint32_t tid) const {
  if (auto it = comms_.find(tid); it != comms_.end()) return it->second;
  if (auto it = comms_.find(pid); it != comms_.end()) return it->second;
  // The idle task of a system-wide file: perf names it as the kernel does.
  if (pid == 0 && tid == 0) return "swapper";
  return ":" + std::to_string(tid);
}

}  // namespace userperf::report
