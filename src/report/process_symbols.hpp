// `userperf script`'s names for addresses: the report's address spaces (MMAP, MMAP2, COMM with
// exec, FORK, in file order) and its ELF symbols (ElfFile: dwfl, debug files by build id), so
// that the script and the report name an address the same way.
#pragma once

#include "perfdata/script_printer.hpp"
#include "report/address_space.hpp"
#include "report/symbol_resolver.hpp"

namespace userperf::report {

class ProcessSymbols final : public perfdata::ScriptSymbols {
 public:
  // Records that do not decode are left to the printer, which reports them.
  void observe(const perfdata::RecordView& record) override;
  std::string describe(std::uint32_t pid, std::uint64_t address) override;

 private:
  ProcessTable processes_;
  SymbolResolver resolver_;
};

}  // namespace userperf::report
