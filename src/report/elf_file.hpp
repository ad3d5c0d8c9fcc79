// One ELF file's function symbols and load segments, through libdw's dwfl: .symtab, else the
// separate debug file found by build id (/usr/lib/debug/.build-id/..., as perf finds libc6-dbg's),
// else .gnu_debugdata, else .dynsym. Addresses are link-time virtual addresses.
//
// The sorted symbol table is made once per process for each file (a libc with its debug file has
// tens of thousands of symbols): a process-wide cache, shared by every ElfFile, holds the last
// tables made, each under the identity (device, inode, size, modification and change times) of the
// file it was read from and of the debug file dwfl took the symbols from, if any. A file replaced
// or rewritten has another identity, so its symbols are read again. Thread-safe: the cache is
// locked and a table never changes once made (an ElfFile itself is used by one thread at a time).
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

struct Dwfl;
struct Dwfl_Module;

namespace userperf::report {

// A Dwfl for files reported by path (offline), finding debug files by build id and
// .gnu_debuglink under /usr/lib/debug: what every Dwfl of the report starts from. nullptr on
// failure; the caller dwfl_end()s it.
Dwfl* begin_offline_dwfl();

// A read-only descriptor of the regular file at `path`, or -1. Paths come from the profiled
// processes' mappings: a FIFO or device there must not block the report or be read.
int open_regular_file(const std::string& path);

class ElfFile {
 public:
  // Always returns a file; loaded() is false when `path` is missing or not ELF.
  static std::unique_ptr<ElfFile> open(const std::string& path);
  ~ElfFile();
  ElfFile(const ElfFile&) = delete;
  ElfFile& operator=(const ElfFile&) = delete;

  bool loaded() const { return module_ != nullptr; }
  // The link-time address of file offset `offset`; false when no PT_LOAD segment maps it.
  bool vaddr_of_offset(std::uint64_t offset, std::uint64_t& vaddr) const;
  // The demangled name of the function symbol covering `vaddr`; empty when none does. With
  // `offset`, how far past the symbol's start vaddr is.
  std::string function_at(std::uint64_t vaddr, std::uint64_t* offset = nullptr) const;
  // The function covering `vaddr`: its name (as function_at) and its entry's link-time address.
  bool function_entry(std::uint64_t vaddr, std::string& name, std::uint64_t& entry) const;
  // The source file and line of `vaddr` from DWARF (the file's or its debug file's); false when
  // there is no line information for it.
  bool source_at(std::uint64_t vaddr, std::string& file, std::uint32_t& line) const;
  // Where the function containing `vaddr` is declared (DW_AT_decl_file and DW_AT_decl_line of the
  // DW_TAG_subprogram around it, not of a function inlined there): pprof's Function start_line.
  // The line of a function's entry address may be a line of code inlined into it. False when
  // DWARF does not say.
  bool declaration_at(std::uint64_t vaddr, std::string& file, std::uint32_t& line) const;
  // The GNU build id in lower-case hex; "" when the file has none.
  std::string build_id() const;

 private:
  ElfFile() = default;
  struct Segment {
    std::uint64_t offset = 0, vaddr = 0, filesz = 0;
    bool executable = false;
  };
  // A function symbol, by link-time address: the file's symbol table read once and sorted, so a
  // lookup is a binary search (dwfl_module_addrinfo scans the whole table on every call).
  struct Symbol {
    std::uint64_t start = 0, end = 0;  // [start, end); a sizeless symbol ends where the next starts
    const char* name = nullptr;        // in its SymbolTable's names (the ELF file's while made)
  };
  // The sorted symbols and the names they point at (elf_file.cpp): immutable once made, shared
  // through the process-wide cache.
  struct SymbolTable;
  void load_symbols() const;
  std::shared_ptr<const SymbolTable> make_symbol_table() const;
  std::vector<Symbol> plt_stubs(std::vector<std::string>& stub_names) const;
  const Segment* segment_of_vaddr(std::uint64_t vaddr) const;
  Dwfl* dwfl_ = nullptr;
  Dwfl_Module* module_ = nullptr;
  std::uint64_t bias_ = 0;  // dwfl address - link-time address
  std::vector<Segment> segments_;
  struct stat identity_ {};  // of the file opened, for the symbol table cache
  mutable std::shared_ptr<const SymbolTable> symbols_;  // nullptr: none (a file not loaded)
  mutable bool symbols_loaded_ = false;
  // declaration_at's answers by address (several locations of a function ask for its entry).
  mutable std::unordered_map<std::uint64_t, std::pair<std::string, std::uint32_t>> declarations_;
};

}  // namespace userperf::report
