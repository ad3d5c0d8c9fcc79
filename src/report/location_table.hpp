// Turns the code addresses of samples into a Profile's Locations, Functions and Dsos, each made
// once: a location per (mapped file, file offset) whichever process mapped the file where, a
// function per (dso, name), a dso per path. Symbolization (ELF symbols through SymbolResolver,
// DWARF lines when asked) is paid once per distinct address, which is what keeps a report of a
// million samples of forty processes as fast as perf's.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "perfdata/features.hpp"
#include "report/address_space.hpp"
#include "report/flat_id_map.hpp"
#include "report/profile.hpp"
#include "report/symbol_resolver.hpp"

namespace userperf::report {

class LocationTable {
 public:
  // `lines`: look up DWARF source lines too (pprof's Line; the tables do not show them).
  LocationTable(Profile& profile, const perfdata::Features& features, bool lines);

  // A user address of a process with address space `space`. A `return_address` (a caller's
  // frame) is looked up at address - 1, in its call instruction: a call to a function that does
  // not return may be the last instruction of its caller. An address no mapping covers keeps its
  // own Location, at the address as sampled, which is how perf shows it.
  LocationId user(const AddressSpace& space, std::uint64_t address, bool return_address);
  LocationId kernel(std::uint64_t address);

  SymbolResolver& resolver() { return resolver_; }

 private:
  DsoId dso(const std::string& path, bool kernel);
  FunctionId function(DsoId dso, const std::string& name, const std::string& file,
                      std::uint32_t line);
  LocationId resolve_file(const Mapping& mapping, std::uint64_t offset);
  LocationId make(DsoId dso, std::uint64_t address, FunctionId function, std::uint32_t line);

  Profile& profile_;
  SymbolResolver resolver_;
  bool lines_;
  std::unordered_map<std::string, std::string> recorded_build_ids_;  // path -> hex (BUILD_ID)
  std::unordered_map<std::string, DsoId> dsos_;                      // path -> dso
  std::unordered_map<std::string, FunctionId> functions_;            // dso, '\0', name -> function
  // User locations by (Mapping::file + 1) << 48 | file offset; locations no mapping covers, and
  // kernel locations, by address.
  FlatIdMap user_locations_;
  FlatIdMap unmapped_locations_;
  FlatIdMap kernel_locations_;
  std::unordered_map<std::uint32_t, DsoId> file_dsos_;  // Mapping::file -> dso
};

}  // namespace userperf::report
