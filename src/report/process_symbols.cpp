#include "report/process_symbols.hpp"

#include <cstdio>

#include "report/process_records.hpp"

namespace userperf::report {

void ProcessSymbols::observe(const perfdata::RecordView& record) {
  replay_process_record(processes_, record);
}

std::string ProcessSymbols::describe(std::uint32_t pid, std::uint64_t address) {
  const Mapping* mapping = processes_.space(pid).find(address);
  if (mapping == nullptr) return {};
  const std::string where = "(" + mapping->path + ")";
  char past_start[32];
  if (const PerfMap* jit = resolver_.perf_map(mapping->path)) {
    PerfMap::Symbol symbol{};
    if (!jit->find(address, symbol)) return where;
    std::snprintf(past_start, sizeof past_start, "+0x%llx",
                  static_cast<unsigned long long>(address - symbol.start));
    return *symbol.name + past_start + " " + where;
  }
  const ElfFile* elf = resolver_.image_of_mapping(mapping->path);
  std::uint64_t vaddr = 0;
  std::uint64_t offset = 0;
  if (elf == nullptr || !elf->vaddr_of_offset(address - mapping->start + mapping->pgoff, vaddr)) {
    return where;
  }
  const std::string name = elf->function_at(vaddr, &offset);
  if (name.empty()) return where;
  std::snprintf(past_start, sizeof past_start, "+0x%llx", static_cast<unsigned long long>(offset));
  return name + past_start + " " + where;
}

}  // namespace userperf::report
