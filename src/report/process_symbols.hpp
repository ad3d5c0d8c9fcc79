// `userperf script`'s names for addresses: the report's address spaces (MMAP, MMAP2, COMM with
// exec, FORK, in file order) and its ELF symbols (ElfFile: dwfl, debug files by build id), so
// that the script and the report name an address the same way.
#pragma once

#include "perfdata/reader.hpp"
#include "report/address_space.hpp"
#include "report/symbol_resolver.hpp"

namespace userperf::report {

class ProcessSymbols {
 public:
  // Takes in a record's effect on the address spaces, in file order. Records that do not decode
  // are left to the printer, which reports them.
  void observe(const perfdata::RecordView& record);
  // "name+0xoff (path)", "(path)" when the mapped file has no symbol there, "" when nothing is
  // mapped at `address` in `pid`.
  std::string describe(std::uint32_t pid, std::uint64_t address);

 private:
  ProcessTable processes_;
  SymbolResolver resolver_;
};

}  // namespace userperf::report
