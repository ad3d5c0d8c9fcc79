#include "report/location_table.hpp"

#include "report/perf_map.hpp"
#include "support/hex.hpp"

namespace userperf::report {

namespace {

constexpr const char* kUnknown = "[unknown]";
const std::string kUnknownName = kUnknown;
constexpr int kFileShift = 48;
constexpr std::uint64_t kOffsetMask = (std::uint64_t{1} << kFileShift) - 1;

}  // namespace

LocationTable::LocationTable(Profile& profile, const perfdata::Features& features, bool lines)
    : profile_(profile), lines_(lines) {
  if (features.build_ids) {
    for (const perfdata::BuildIdEntry& entry : *features.build_ids) {
      recorded_build_ids_.emplace(entry.filename, support::hex_bytes(entry.id));
    }
  }
}

DsoId LocationTable::dso(const std::string& path, bool kernel) {
  auto [it, fresh] = dsos_.try_emplace(path, static_cast<DsoId>(profile_.dsos.size()));
  if (fresh) {
    Dso dso{path, kernel ? "[kernel.kallsyms]" : short_name(path), {}, kernel};
    if (auto recorded = recorded_build_ids_.find(path); recorded != recorded_build_ids_.end()) {
      dso.build_id = recorded->second;
    } else if (!kernel && !path.empty() && path.front() == '/' && !is_perf_map(path)) {
      dso.build_id = resolver_.image(path).build_id();
    }
    profile_.dsos.push_back(std::move(dso));
  }
  return it->second;
}

FunctionId LocationTable::function(DsoId dso, const std::string& name, const std::string& file,
                                   std::uint32_t line) {
  std::string key = std::to_string(dso);
  key += '\0';
  key += name;
  auto [it, fresh] =
      functions_.try_emplace(std::move(key), static_cast<FunctionId>(profile_.functions.size()));
  if (fresh) profile_.functions.push_back({name, dso, file, line});
  return it->second;
}

LocationId LocationTable::make(DsoId dso, std::uint64_t address, FunctionId function,
                               std::uint32_t line) {
  profile_.locations.push_back({dso, address, function, line});
  return static_cast<LocationId>(profile_.locations.size() - 1);
}

LocationId LocationTable::user(const AddressSpace& space, std::uint64_t address,
                               bool return_address) {
  const std::uint64_t code = return_address ? address - 1 : address;
  const Mapping* mapping = space.find(code);
  if (mapping == nullptr) {
    // A frame-pointer walk that left the stack, or code no MMAP announced (JIT code without a
    // map file): it has no symbol, and perf names it by the address sampled.
    if (const LocationId known = unmapped_locations_.find(address); known != FlatIdMap::kNone) {
      return known;
    }
    const DsoId none = dso(kUnknown, false);
    const LocationId made = make(none, address, function(none, kUnknown, {}, 0), 0);
    unmapped_locations_.insert(address, made);
    return made;
  }
  const std::uint64_t offset = code - mapping->start + mapping->pgoff;
  // An offset past 2^48 cannot be packed into a key; it is left uncached (no file is that large).
  const bool packable = offset <= kOffsetMask;
  const std::uint64_t key = (std::uint64_t{mapping->file} + 1) << kFileShift | offset;
  if (packable) {
    if (const LocationId known = user_locations_.find(key); known != FlatIdMap::kNone) return known;
  }
  const LocationId made = resolve_file(*mapping, offset);
  profile_.locations[made].map_address = offset;
  profile_.locations[made].sampled_address = code;
  if (packable) user_locations_.insert(key, made);
  return made;
}

LocationId LocationTable::resolve_file(const Mapping& mapping, std::uint64_t offset) {
  auto [known, fresh] = file_dsos_.try_emplace(mapping.file);
  if (fresh) known->second = dso(mapping.path, false);
  const DsoId owner = known->second;
  if (const PerfMap* jit = resolver_.perf_map(mapping.path)) {
    // Anonymous code, mapped at pgoff = its start (ProcessTable::on_mmap): the offset is the
    // address the map lists.
    PerfMap::Symbol symbol{};
    const std::string& name = jit->find(offset, symbol) ? *symbol.name : kUnknownName;
    return make(owner, offset, function(owner, name, {}, 0), 0);
  }
  const ElfFile* elf = resolver_.image_of_mapping(mapping.path);
  std::uint64_t vaddr = 0;
  if (elf == nullptr || !elf->vaddr_of_offset(offset, vaddr)) {
    return make(owner, offset, function(owner, kUnknown, {}, 0), 0);
  }
  std::string name;
  std::uint64_t entry = 0;
  if (!elf->function_entry(vaddr, name, entry)) {
    return make(owner, vaddr, function(owner, kUnknown, {}, 0), 0);
  }
  std::string source, entry_source;
  std::uint32_t line = 0, entry_line = 0;
  if (lines_) {
    elf->source_at(vaddr, source, line);
    if (!elf->declaration_at(entry, entry_source, entry_line)) {
      elf->source_at(entry, entry_source, entry_line);
    }
  }
  return make(owner, vaddr, function(owner, name, entry_source, entry_line), line);
}

LocationId LocationTable::kernel(std::uint64_t address) {
  if (const LocationId known = kernel_locations_.find(address); known != FlatIdMap::kNone) {
    return known;
  }
  const DsoId owner = dso("[kernel.kallsyms]", true);
  const std::string& name = resolver_.kernel_function(address);
  const LocationId made =
      make(owner, address, function(owner, name.empty() ? kUnknown : name, {}, 0), 0);
  kernel_locations_.insert(address, made);
  return made;
}

}  // namespace userperf::report
