#include "report/elf_file.hpp"

#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "report/demangle.hpp"

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
      file->segments_.push_back({phdr.p_offset, phdr.p_vaddr, phdr.p_filesz});
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

bool ElfFile::function_entry(std::uint64_t vaddr, std::string& name, std::uint64_t& entry) const {
  if (module_ == nullptr) return false;
  GElf_Off past_start = 0;
  GElf_Sym sym;
  const char* raw =
      dwfl_module_addrinfo(module_, vaddr + bias_, &past_start, &sym, nullptr, nullptr, nullptr);
  if (raw == nullptr || *raw == '\0') return false;
  const int type = GELF_ST_TYPE(sym.st_info);
  if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE) return false;
  // "__libc_start_main@@GLIBC_2.34": the version is not part of the function's name.
  const std::string plain(raw, std::strcspn(raw, "@"));
  name = demangle(plain.c_str());
  entry = vaddr - past_start;
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

std::string ElfFile::build_id() const {
  if (module_ == nullptr) return {};
  const unsigned char* bits = nullptr;
  GElf_Addr vaddr = 0;
  const int size = dwfl_module_build_id(module_, &bits, &vaddr);
  std::string hex;
  static const char kDigits[] = "0123456789abcdef";
  for (int i = 0; i < size; ++i) {
    hex += kDigits[bits[i] >> 4];
    hex += kDigits[bits[i] & 15];
  }
  return hex;
}

}  // namespace userperf::report
