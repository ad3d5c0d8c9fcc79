#include "report/elf_file.hpp"

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <list>
#include <mutex>

#include "report/demangle.hpp"
#include "support/hex.hpp"

namespace userperf::report {

Dwfl* begin_offline_dwfl() {
  static char* debuginfo_path = nullptr;
  static const Dwfl_Callbacks callbacks = {
      .find_elf = nullptr,
      .find_debuginfo = dwfl_standard_find_debuginfo,
      .section_address = dwfl_offline_section_address,
      .debuginfo_path = &debuginfo_path,
  };
  return dwfl_begin(&callbacks);
}

int open_regular_file(const std::string& path) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return -1;
  }
  return fd;
}

std::unique_ptr<ElfFile> ElfFile::open(const std::string& path) {
  std::unique_ptr<ElfFile> file(new ElfFile);
  file->dwfl_ = begin_offline_dwfl();
  if (file->dwfl_ == nullptr) return file;
  const int fd = open_regular_file(path);
  if (fd < 0) return file;
  // The identity of what dwfl reads, for the symbol table cache (none if fstat fails).
  if (fstat(fd, &file->identity_) != 0) file->identity_ = {};
  // Base 0: an ET_DYN file's addresses are its link-time ones (bias 0); ET_EXEC ignores it.
  Dwfl_Module* module = dwfl_report_elf(file->dwfl_, path.c_str(), path.c_str(), fd, 0, false);
  dwfl_report_end(file->dwfl_, nullptr, nullptr);
  if (module == nullptr) {
    close(fd);  // dwfl owns the descriptor only when it reports the module
    return file;
  }
  Dwarf_Addr bias = 0;
  Elf* elf = dwfl_module_getelf(module, &bias);
  if (elf == nullptr) return file;
  std::size_t phnum = 0;
  if (elf_getphdrnum(elf, &phnum) != 0) return file;
  for (std::size_t i = 0; i < phnum; ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(elf, static_cast<int>(i), &phdr) != nullptr && phdr.p_type == PT_LOAD) {
      file->segments_.push_back(
          {phdr.p_offset, phdr.p_vaddr, phdr.p_filesz, (phdr.p_flags & PF_X) != 0});
    }
  }
  file->bias_ = bias;
  file->module_ = module;
  return file;
}

ElfFile::~ElfFile() {
  if (dwfl_ != nullptr) dwfl_end(dwfl_);
}

bool ElfFile::vaddr_of_offset(std::uint64_t offset, std::uint64_t& vaddr) const {
  for (const Segment& s : segments_) {
    if (offset >= s.offset && offset - s.offset < s.filesz) {
      vaddr = offset - s.offset + s.vaddr;
      return true;
    }
  }
  return false;
}

std::string ElfFile::function_at(std::uint64_t vaddr, std::uint64_t* offset) const {
  std::string name;
  std::uint64_t entry = 0;
  if (!function_entry(vaddr, name, entry)) return {};
  if (offset != nullptr) *offset = vaddr - entry;
  return name;
}

const ElfFile::Segment* ElfFile::segment_of_vaddr(std::uint64_t vaddr) const {
  for (const Segment& segment : segments_) {
    if (vaddr >= segment.vaddr && vaddr - segment.vaddr < segment.filesz) return &segment;
  }
  return nullptr;
}

struct ElfFile::SymbolTable {
  std::vector<Symbol> symbols;  // sorted by start, no two at one address
  std::string names;            // every Symbol::name, each ended by a NUL
};

namespace {

// What a symbol table is made from: the file opened and the debug file dwfl found for it (an
// empty path when none). Equal keys, equal bytes read (as make sees files: a file rewritten keeps
// its inode but not its times).
struct FileIdentity {
  std::uint64_t device = 0, inode = 0, size = 0;
  std::int64_t modified_s = 0, modified_ns = 0, changed_s = 0, changed_ns = 0;
  explicit FileIdentity(const struct stat& st)
      : device(st.st_dev),
        inode(st.st_ino),
        size(static_cast<std::uint64_t>(st.st_size)),
        modified_s(st.st_mtim.tv_sec),
        modified_ns(st.st_mtim.tv_nsec),
        changed_s(st.st_ctim.tv_sec),
        changed_ns(st.st_ctim.tv_nsec) {}
  FileIdentity() = default;
  bool operator==(const FileIdentity&) const = default;
};

struct SymbolTableKey {
  FileIdentity file;
  std::string debug_path;
  FileIdentity debug;
  bool operator==(const SymbolTableKey&) const = default;
};

// The tables made last, most recently used first. Tables are looked up once per ElfFile, so a
// list scan is cheap beside what a miss costs.
template <class Table>
class SymbolTableCache {
 public:
  std::shared_ptr<const Table> find(const SymbolTableKey& key) {
    std::lock_guard lock(mutex_);
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->first == key) {
        entries_.splice(entries_.begin(), entries_, it);
        return it->second;
      }
    }
    return nullptr;
  }
  void add(SymbolTableKey key, std::shared_ptr<const Table> table) {
    std::lock_guard lock(mutex_);
    entries_.emplace_front(std::move(key), std::move(table));
    if (entries_.size() > kCapacity) entries_.pop_back();
  }

 private:
  // Enough for the objects of a profile and the vDSO copies of a few reports; an ElfFile keeps
  // its own table, so a file used while it falls out is not read again by that ElfFile.
  static constexpr std::size_t kCapacity = 64;
  std::mutex mutex_;
  std::list<std::pair<SymbolTableKey, std::shared_ptr<const Table>>> entries_;
};

}  // namespace

void ElfFile::load_symbols() const {
  symbols_loaded_ = true;
  if (module_ == nullptr) return;
  static SymbolTableCache<SymbolTable> cache;
  // Whether the symbols come from this file or from a debug file, and which: dwfl finds the table
  // (reading section headers, not symbols) and names the debug file it opened for it.
  dwfl_module_getsymtab(module_);
  const char* debug_path = nullptr;
  dwfl_module_info(module_, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, &debug_path);
  struct stat debug {};
  const bool known =
      identity_.st_ino != 0 && (debug_path == nullptr || stat(debug_path, &debug) == 0);
  SymbolTableKey key;
  if (known) {
    key = {FileIdentity(identity_), debug_path == nullptr ? "" : debug_path,
           debug_path == nullptr ? FileIdentity() : FileIdentity(debug)};
    if ((symbols_ = cache.find(key)) != nullptr) return;
  }
  symbols_ = make_symbol_table();
  if (known) cache.add(std::move(key), symbols_);
}

std::shared_ptr<const ElfFile::SymbolTable> ElfFile::make_symbol_table() const {
  struct Candidate {
    Symbol symbol;
    std::uint64_t size = 0;
    int binding = 0;
  };
  std::vector<Candidate> found;
  const int count = dwfl_module_getsymtab(module_);
  for (int i = 1; i < count; ++i) {
    GElf_Sym sym;
    GElf_Addr address = 0;
    GElf_Word section = 0;
    const char* name =
        dwfl_module_getsym_info(module_, i, &sym, &address, &section, nullptr, nullptr);
    if (name == nullptr || *name == '\0' || section == SHN_UNDEF || section == SHN_ABS ||
        section == static_cast<GElf_Word>(-1)) {
      continue;
    }
    const int type = GELF_ST_TYPE(sym.st_info);
    if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE) continue;
    const std::uint64_t vaddr = address - bias_;
    // A label of no type counts only in code: _end, __bss_start and the like are not functions.
    const Segment* segment = segment_of_vaddr(vaddr);
    if (type == STT_NOTYPE && (segment == nullptr || !segment->executable)) continue;
    found.push_back({{vaddr, vaddr + sym.st_size, name}, sym.st_size, GELF_ST_BIND(sym.st_info)});
  }
  std::vector<std::string> plt_names;  // "name@plt" of the PLT stubs, until copied below
  for (const Symbol& stub : plt_stubs(plt_names)) {
    found.push_back({stub, stub.end - stub.start, STB_GLOBAL});
  }
  // Of the names at one address (memcpy and memmove), the one perf shows: a sized one, a
  // non-weak one, a global one, the one with fewer leading underscores, the longer one, else the
  // first in the table.
  const auto underscores = [](const char* name) { return std::strspn(name, "_"); };
  const auto better = [&](const Candidate& a, const Candidate& b) {
    if ((a.size > 0) != (b.size > 0)) return a.size > 0;
    if ((a.binding == STB_WEAK) != (b.binding == STB_WEAK)) return b.binding == STB_WEAK;
    if ((a.binding == STB_GLOBAL) != (b.binding == STB_GLOBAL)) return a.binding == STB_GLOBAL;
    const std::size_t ua = underscores(a.symbol.name), ub = underscores(b.symbol.name);
    if (ua != ub) return ua < ub;
    return std::strlen(a.symbol.name) > std::strlen(b.symbol.name);
  };
  std::stable_sort(found.begin(), found.end(), [&](const Candidate& a, const Candidate& b) {
    if (a.symbol.start != b.symbol.start) return a.symbol.start < b.symbol.start;
    return better(a, b);
  });
  auto table = std::make_shared<SymbolTable>();
  std::vector<Symbol>& symbols = table->symbols;
  for (std::size_t i = 0; i < found.size(); ++i) {
    if (!symbols.empty() && symbols.back().start == found[i].symbol.start) continue;
    symbols.push_back(found[i].symbol);
  }
  // A sizeless symbol reaches the next one's start, as perf's symbols__fixup_end makes it.
  for (std::size_t i = 0; i < symbols.size(); ++i) {
    if (symbols[i].end > symbols[i].start) continue;
    symbols[i].end = i + 1 < symbols.size() ? symbols[i + 1].start : UINT64_MAX;
  }
  // The names, copied out of the ELF file (the table outlives this ElfFile's dwfl): sized first,
  // so that the pointers into them stay put.
  std::size_t bytes = 0;
  for (const Symbol& symbol : symbols) bytes += std::strlen(symbol.name) + 1;
  table->names.reserve(bytes);
  std::vector<std::size_t> at(symbols.size());
  for (std::size_t i = 0; i < symbols.size(); ++i) {
    at[i] = table->names.size();
    table->names.append(symbols[i].name);
    table->names.push_back('\0');
  }
  for (std::size_t i = 0; i < symbols.size(); ++i) symbols[i].name = table->names.data() + at[i];
  return table;
}

std::vector<ElfFile::Symbol> ElfFile::plt_stubs(std::vector<std::string>& stub_names) const {
  // x86-64's lazy-binding PLT: the stub of .rela.plt's i-th relocation is the i-th 16-byte entry
  // of .plt.sec when there is one (IBT), else of .plt after its first, resolver entry. The stubs
  // have no symbols; perf names them "function@plt" from the relocation's symbol, and so do we.
  std::vector<Symbol> stubs;
  Dwarf_Addr bias = 0;
  Elf* elf = dwfl_module_getelf(module_, &bias);
  GElf_Ehdr ehdr;
  if (elf == nullptr || gelf_getehdr(elf, &ehdr) == nullptr || ehdr.e_machine != EM_X86_64) {
    return stubs;
  }
  std::size_t names = 0;
  if (elf_getshdrstrndx(elf, &names) != 0) return stubs;
  Elf_Scn* relocations = nullptr;
  GElf_Shdr relocations_header{}, plt{}, plt_sec{};
  bool have_plt = false, have_plt_sec = false;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr header;
    if (gelf_getshdr(scn, &header) == nullptr) continue;
    const char* name = elf_strptr(elf, names, header.sh_name);
    if (name == nullptr) continue;
    if (std::strcmp(name, ".rela.plt") == 0 && header.sh_type == SHT_RELA) {
      relocations = scn;
      relocations_header = header;
    } else if (std::strcmp(name, ".plt") == 0) {
      plt = header;
      have_plt = true;
    } else if (std::strcmp(name, ".plt.sec") == 0) {
      plt_sec = header;
      have_plt_sec = true;
    }
  }
  if (relocations == nullptr || !(have_plt || have_plt_sec)) return stubs;
  Elf_Scn* symbols = elf_getscn(elf, relocations_header.sh_link);
  GElf_Shdr symbols_header;
  Elf_Data* symbol_data = symbols == nullptr ? nullptr : elf_getdata(symbols, nullptr);
  Elf_Data* relocation_data = elf_getdata(relocations, nullptr);
  if (symbol_data == nullptr || relocation_data == nullptr ||
      gelf_getshdr(symbols, &symbols_header) == nullptr || relocations_header.sh_entsize == 0) {
    return stubs;
  }
  constexpr std::uint64_t kEntry = 16;
  const std::uint64_t first = have_plt_sec ? plt_sec.sh_addr : plt.sh_addr + kEntry;
  const std::uint64_t end =
      have_plt_sec ? plt_sec.sh_addr + plt_sec.sh_size : plt.sh_addr + plt.sh_size;
  const std::size_t count = relocations_header.sh_size / relocations_header.sh_entsize;
  for (std::size_t i = 0; i < count && first + (i + 1) * kEntry <= end; ++i) {
    GElf_Rela rela;
    GElf_Sym sym;
    if (gelf_getrela(relocation_data, static_cast<int>(i), &rela) == nullptr ||
        gelf_getsym(symbol_data, static_cast<int>(GELF_R_SYM(rela.r_info)), &sym) == nullptr) {
      continue;
    }
    // An IRELATIVE relocation (an ifunc's slot, as libc's memcpy) has no symbol: perf names its
    // stub "@plt", and so do we.
    const char* name = elf_strptr(elf, symbols_header.sh_link, sym.st_name);
    if (name == nullptr) continue;
    stub_names.push_back(std::string(name) + "@plt");
    const std::uint64_t start = first + i * kEntry;
    stubs.push_back({start, start + kEntry, nullptr});
  }
  // The names are kept in stub_names, which is done growing: point at them now.
  for (std::size_t i = 0; i < stubs.size(); ++i) stubs[i].name = stub_names[i].c_str();
  return stubs;
}

bool ElfFile::function_entry(std::uint64_t vaddr, std::string& name, std::uint64_t& entry) const {
  if (!symbols_loaded_) load_symbols();
  if (symbols_ == nullptr) return false;
  const std::vector<Symbol>& symbols = symbols_->symbols;
  auto it =
      std::upper_bound(symbols.begin(), symbols.end(), vaddr,
                       [](std::uint64_t a, const Symbol& symbol) { return a < symbol.start; });
  if (it == symbols.begin()) return false;
  const Symbol& symbol = *std::prev(it);
  if (vaddr >= symbol.end) return false;
  // "clock_gettime@@GLIBC_2.17": perf shows the version; the name before it is what demangles.
  const std::size_t plain = std::strcspn(symbol.name, "@");
  name = demangle_without_parameters(std::string(symbol.name, plain).c_str());
  name += symbol.name + plain;
  entry = symbol.start;
  return true;
}

bool ElfFile::source_at(std::uint64_t vaddr, std::string& file, std::uint32_t& line) const {
  if (module_ == nullptr) return false;
  Dwfl_Line* found = dwfl_module_getsrc(module_, vaddr + bias_);
  if (found == nullptr) return false;
  int number = 0;
  const char* name = dwfl_lineinfo(found, nullptr, &number, nullptr, nullptr, nullptr);
  if (name == nullptr || number <= 0) return false;
  file = name;
  line = static_cast<std::uint32_t>(number);
  return true;
}

namespace {

// dwarf_getfuncs' callback: the defining DW_TAG_subprogram whose code holds `pc`.
struct FunctionSearch {
  Dwarf_Addr pc = 0;
  Dwarf_Die found{};
  bool hit = false;
};

int find_function(Dwarf_Die* die, void* arg) {
  auto* search = static_cast<FunctionSearch*>(arg);
  if (dwarf_haspc(die, search->pc) <= 0) return DWARF_CB_OK;
  search->found = *die;
  search->hit = true;
  return DWARF_CB_ABORT;
}

}  // namespace

bool ElfFile::declaration_at(std::uint64_t vaddr, std::string& file, std::uint32_t& line) const {
  if (module_ == nullptr) return false;
  auto [known, fresh] = declarations_.try_emplace(vaddr);
  if (!fresh) {
    file = known->second.first;
    line = known->second.second;
    return line != 0;
  }
  Dwarf_Addr cu_bias = 0;
  Dwarf_Die* cu = dwfl_module_addrdie(module_, vaddr + bias_, &cu_bias);
  if (cu == nullptr) return false;
  // Not dwarf_getscopes: past an inlined instance it follows the abstract origin's scopes, so the
  // subprogram the code was inlined into is not among them. A scan of the CU's functions, once
  // per address (declarations_).
  FunctionSearch search;
  search.pc = vaddr + bias_ - cu_bias;
  dwarf_getfuncs(cu, find_function, &search, 0);
  if (!search.hit) return false;
  int number = 0;
  const char* name = dwarf_decl_file(&search.found);
  if (dwarf_decl_line(&search.found, &number) != 0 || number <= 0 || name == nullptr) return false;
  file = name;
  line = static_cast<std::uint32_t>(number);
  known->second = {file, line};
  return true;
}

std::string ElfFile::build_id() const {
  if (module_ == nullptr) return {};
  const unsigned char* bits = nullptr;
  GElf_Addr vaddr = 0;
  const int size = dwfl_module_build_id(module_, &bits, &vaddr);
  if (size <= 0) return {};
  return support::hex_bytes({bits, static_cast<std::size_t>(size)});
}

}  // namespace userperf::report
