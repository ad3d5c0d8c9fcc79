#include "record/attach/elf_symbols.hpp"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <span>
#include <sstream>

#include "support/byte_reader.hpp"

namespace userperf::record {
namespace {

constexpr std::uint64_t kMaxObjectSize = std::uint64_t{1} << 30;

Error malformed(const std::string& what, std::uint64_t offset) {
  return make_error(ENOEXEC, "malformed ELF: " + what, offset);
}

// The `index`th fixed-size entry of a table at `offset`.
template <class T>
bool read_entry(std::span<const std::uint8_t> bytes, std::uint64_t offset, std::uint64_t index,
                std::uint64_t entry_size, T& out) {
  if (entry_size < sizeof(T) || offset > bytes.size()) return false;
  if (index > (bytes.size() - offset) / entry_size) return false;
  const std::uint64_t at = offset + index * entry_size;
  support::ByteReader reader(bytes.subspan(at), at);
  return reader.read(out);
}

}  // namespace

std::uint64_t DynamicSymbols::find(const std::string& name) const {
  for (const auto& [symbol, value] : functions) {
    if (symbol == name) return value;
  }
  return 0;
}

Expected<DynamicSymbols> parse_dynamic_symbols(const std::vector<std::uint8_t>& data) {
  const std::span<const std::uint8_t> bytes(data);
  Elf64_Ehdr header{};
  if (!read_entry(bytes, 0, 0, sizeof header, header) ||
      std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) {
    return malformed("no ELF header", 0);
  }
  if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB ||
      header.e_machine != EM_X86_64) {
    return make_error(ENOEXEC, "not an x86-64 ELF64 object");
  }
  DynamicSymbols out;
  bool loads = false;
  for (std::uint64_t i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr ph{};
    if (!read_entry(bytes, header.e_phoff, i, header.e_phentsize, ph)) {
      return malformed("program header " + std::to_string(i), header.e_phoff);
    }
    if (ph.p_type != PT_LOAD) continue;
    const std::uint64_t page = ph.p_vaddr & ~std::uint64_t{4095};
    if (!loads || page < out.first_load_vaddr) out.first_load_vaddr = page;
    loads = true;
  }
  for (std::uint64_t i = 0; i < header.e_shnum; ++i) {
    Elf64_Shdr symbols{};
    if (!read_entry(bytes, header.e_shoff, i, header.e_shentsize, symbols)) {
      return malformed("section header " + std::to_string(i), header.e_shoff);
    }
    if (symbols.sh_type != SHT_DYNSYM) continue;
    Elf64_Shdr strings{};
    if (!read_entry(bytes, header.e_shoff, symbols.sh_link, header.e_shentsize, strings) ||
        strings.sh_offset > bytes.size() || strings.sh_size > bytes.size() - strings.sh_offset) {
      return malformed(".dynsym's string table", header.e_shoff);
    }
    const auto names = bytes.subspan(strings.sh_offset, strings.sh_size);
    const std::uint64_t count = symbols.sh_entsize == 0 ? 0 : symbols.sh_size / symbols.sh_entsize;
    for (std::uint64_t s = 0; s < count; ++s) {
      Elf64_Sym sym{};
      if (!read_entry(bytes, symbols.sh_offset, s, symbols.sh_entsize, sym)) {
        return malformed("symbol " + std::to_string(s), symbols.sh_offset);
      }
      const unsigned type = ELF64_ST_TYPE(sym.st_info);
      if (sym.st_shndx == SHN_UNDEF || (type != STT_FUNC && type != STT_GNU_IFUNC) ||
          sym.st_name >= names.size()) {
        continue;
      }
      const char* name = reinterpret_cast<const char*>(names.data() + sym.st_name);
      out.functions.emplace_back(std::string(name, strnlen(name, names.size() - sym.st_name)),
                                 sym.st_value);
    }
  }
  return out;
}

std::vector<ProcessMapping> read_process_maps(pid_t pid) {
  std::vector<ProcessMapping> out;
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  while (std::getline(maps, line)) {
    unsigned long long start = 0;
    unsigned long long end = 0;
    unsigned long long offset = 0;
    char perms[8] = {};
    int path_at = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &offset,
                    &path_at) < 4) {
      continue;
    }
    ProcessMapping m{start, end, offset, perms[2] == 'x', {}};
    if (path_at > 0) m.path = line.substr(static_cast<std::size_t>(path_at));
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<LoadedObject> loaded_objects(pid_t pid, const std::string& prefix) {
  std::vector<LoadedObject> out;
  for (const ProcessMapping& m : read_process_maps(pid)) {
    if (m.offset != 0 || m.path.empty() || m.path[0] != '/') continue;
    const std::string file = m.path.substr(m.path.rfind('/') + 1);
    if (file.compare(0, prefix.size(), prefix) != 0) continue;
    bool known = false;
    for (const LoadedObject& o : out) known = known || o.path == m.path;
    if (!known) out.push_back({m.path, m.start});
  }
  return out;
}

namespace {

// An object file as it was when its symbols were parsed: the same file is the same symbols.
struct FileIdentity {
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = 0;
  std::int64_t mtime_ns = 0;
  bool operator==(const FileIdentity&) const = default;
};

// Symbols parsed before, by file: record -p looks the agent's entry points up at each batch of
// new threads (every 100 ms while a program starts threads), and reading the agent, 27 MB with
// its debug information, took 0.2 s each time, which the new threads spent unsampled.
class SymbolCache {
 public:
  std::shared_ptr<const DynamicSymbols> find(const FileIdentity& file) {
    const std::lock_guard lock(mutex_);
    for (const auto& [identity, symbols] : entries_) {
      if (identity == file) return symbols;
    }
    return nullptr;
  }
  void add(const FileIdentity& file, std::shared_ptr<const DynamicSymbols> symbols) {
    const std::lock_guard lock(mutex_);
    if (entries_.size() >= kMaxEntries) entries_.erase(entries_.begin());
    entries_.emplace_back(file, std::move(symbols));
  }

 private:
  static constexpr std::size_t kMaxEntries = 8;
  std::mutex mutex_;
  std::vector<std::pair<FileIdentity, std::shared_ptr<const DynamicSymbols>>> entries_;
};

SymbolCache& symbol_cache() {
  static SymbolCache cache;
  return cache;
}

}  // namespace

Expected<std::uint64_t> remote_function(pid_t pid, const LoadedObject& object,
                                        const std::string& name) {
  std::string path = "/proc/" + std::to_string(pid) + "/root" + object.path;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    path = object.path;
    fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  }
  if (fd < 0) {
    const int err = errno;
    return make_error(err, "cannot read " + object.path + ": " + std::strerror(err));
  }
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    close(fd);
    return make_error(err, "cannot read " + object.path + ": " + std::strerror(err));
  }
  const FileIdentity identity{st.st_dev, st.st_ino, st.st_size,
                              std::int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec};
  std::shared_ptr<const DynamicSymbols> symbols = symbol_cache().find(identity);
  if (symbols == nullptr) {
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (size > kMaxObjectSize) {
      close(fd);
      return make_error(EFBIG, object.path + " is too large");
    }
    std::vector<std::uint8_t> bytes(size);
    std::uint64_t done = 0;
    while (done < size) {
      const ssize_t n = pread(fd, bytes.data() + done, size - done, static_cast<off_t>(done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<std::uint64_t>(n);
    }
    close(fd);
    if (done != size) return make_error(EIO, "cannot read " + object.path);
    Expected<DynamicSymbols> parsed = parse_dynamic_symbols(bytes);
    if (!parsed) {
      return make_error(parsed.error().code, object.path + ": " + parsed.error().message);
    }
    symbols = std::make_shared<const DynamicSymbols>(std::move(*parsed));
    symbol_cache().add(identity, symbols);
  } else {
    close(fd);
  }
  const std::uint64_t value = symbols->find(name);
  if (value == 0) return std::uint64_t{0};
  return object.base - symbols->first_load_vaddr + value;
}

}  // namespace userperf::record
