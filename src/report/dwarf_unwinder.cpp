#include "report/dwarf_unwinder.hpp"

#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstring>

#include "report/elf_file.hpp"
#include "report/perf_map.hpp"

namespace userperf::report {

namespace {

constexpr const char* kVdsoPath = "[vdso]";

// This process's vdso. Every process of this kernel maps the same image, so a recorded "[vdso]"
// mapping of the same size is unwound with its CFI (the file is assumed to be recorded on this
// machine, as for the ELF files).
struct LocalVdso {
  std::span<const std::uint8_t> image;
  int fd = -1;  // a memfd holding the image: dwfl reads modules from descriptors
};

const LocalVdso& local_vdso() {
  static const LocalVdso vdso = [] {
    LocalVdso found;
    const auto base = getauxval(AT_SYSINFO_EHDR);
    std::FILE* maps = std::fopen("/proc/self/maps", "re");
    if (base == 0 || maps == nullptr) {
      if (maps != nullptr) std::fclose(maps);
      return found;
    }
    char line[512];
    while (std::fgets(line, sizeof line, maps) != nullptr) {
      unsigned long start = 0, end = 0;
      if (std::strstr(line, kVdsoPath) != nullptr &&
          std::sscanf(line, "%lx-%lx", &start, &end) == 2 && start == base) {
        found.image = {reinterpret_cast<const std::uint8_t*>(base), end - start};
      }
    }
    std::fclose(maps);
    if (found.image.empty()) return found;
    const int fd = memfd_create("userperf-vdso", MFD_CLOEXEC);
    if (fd >= 0 && write(fd, found.image.data(), found.image.size()) ==
                       static_cast<ssize_t>(found.image.size())) {
      found.fd = fd;
    } else if (fd >= 0) {
      close(fd);
    }
    return found;
  }();
  return vdso;
}

// Anonymous code, which ProcessTable maps as its process's perf map: the map file's bytes are
// not the code's.
bool is_jit_code(const Mapping& mapping) {
  return is_perf_map(mapping.path);
}

bool is_local_vdso(const Mapping& mapping) {
  return mapping.path == kVdsoPath && mapping.pgoff == 0 &&
         mapping.end - mapping.start == local_vdso().image.size() && local_vdso().fd >= 0;
}

// The load bias of the ELF file open at `fd` (runtime address - link-time address), given that
// file offset `offset` is mapped at `address`: from the PT_LOAD segment holding that offset, since
// a segment's p_vaddr and p_offset may differ by more than the mapping's page alignment (lld puts
// each segment one page further in memory than in the file). False when no segment holds it.
bool load_bias(int fd, std::uint64_t offset, std::uint64_t address, std::uint64_t& bias) {
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  if (elf == nullptr) return false;
  bool found = false;
  std::size_t phnum = 0;
  if (elf_getphdrnum(elf, &phnum) == 0) {
    for (std::size_t i = 0; i < phnum && !found; ++i) {
      GElf_Phdr phdr;
      if (gelf_getphdr(elf, static_cast<int>(i), &phdr) != nullptr && phdr.p_type == PT_LOAD &&
          offset >= phdr.p_offset && offset - phdr.p_offset < phdr.p_filesz) {
        bias = address - (offset - phdr.p_offset + phdr.p_vaddr);
        found = true;
      }
    }
  }
  elf_end(elf);
  return found;
}

}  // namespace

struct DwarfUnwinder::Session {
  Dwfl* dwfl = nullptr;
  bool attached = false;
  std::uint32_t pid = 0;
  std::uint64_t space_id = 0;
  std::uint64_t generation = 0;  // of the space when the modules were last checked against it
  // Each module's file and where it was mapped when reported, to check it against later mappings.
  struct ReportedModule {
    Dwfl_Module* module = nullptr;
    std::string path;
    std::uint64_t start = 0, pgoff = 0;
  };
  std::vector<ReportedModule> modules;
  bool stale = false;  // a module was met over another file's mapping: make the session anew
  // The sample being unwound.
  const AddressSpace* space = nullptr;
  std::array<std::uint64_t, 17> registers{};
  std::uint64_t sp = 0;
  std::span<const std::uint8_t> stack;
  std::vector<UnwoundFrame>* frames = nullptr;
  std::size_t max_frames = 0;
  std::unordered_map<std::string, int> files;  // path -> fd (-1: cannot be opened)

  ~Session() {
    if (dwfl != nullptr) dwfl_end(dwfl);
    for (auto& [path, fd] : files) {
      if (fd >= 0) close(fd);
    }
  }

  // True while every module still has its file mapped where it was reported.
  bool modules_match(const AddressSpace& current) const {
    for (const ReportedModule& reported : modules) {
      const Mapping* mapping = current.find(reported.start);
      if (mapping == nullptr || mapping->path != reported.path ||
          mapping->start - mapping->pgoff != reported.start - reported.pgoff) {
        return false;
      }
    }
    return true;
  }

  // Makes sure dwfl knows the ELF file mapped at `pc`; false when it cannot (no mapping, no file).
  bool report_module(std::uint64_t pc) {
    const Mapping* mapping = space->find(pc);
    if (Dwfl_Module* known = dwfl_addrmodule(dwfl, pc); known != nullptr) {
      // A module reported for another file than the one mapped here now: its CFI would be wrong.
      // (session_for renews sessions whose modules moved; this catches a new file mapped inside
      // an old module's range, away from where the module was reported.)
      for (const ReportedModule& reported : modules) {
        if (reported.module != known) continue;
        stale = mapping != nullptr && mapping->path != reported.path;
        return !stale;
      }
      return true;
    }
    // A JIT's code (mapped as its /tmp/perf-PID.map) has no file and no CFI.
    if (mapping == nullptr || mapping->path.empty() || is_jit_code(*mapping)) return false;
    int fd = -1;
    if (mapping->path.front() == '/') {
      fd = open_regular_file(mapping->path);
    } else if (is_local_vdso(*mapping)) {
      fd = dup(local_vdso().fd);
    }
    if (fd < 0) return false;
    std::uint64_t bias = 0;
    if (!load_bias(fd, pc - mapping->start + mapping->pgoff, pc, bias)) {
      close(fd);
      return false;
    }
    dwfl_report_begin_add(dwfl);
    // add_p_vaddr: the base is the bias itself, whatever the first segment's p_vaddr.
    Dwfl_Module* module =
        dwfl_report_elf(dwfl, mapping->path.c_str(), mapping->path.c_str(), fd, bias, true);
    dwfl_report_end(dwfl, nullptr, nullptr);
    if (module == nullptr) {
      close(fd);  // dwfl owns the descriptor only when it reports the module
      return false;
    }
    modules.push_back({module, mapping->path, mapping->start, mapping->pgoff});
    return dwfl_addrmodule(dwfl, pc) == module;
  }

  bool read_stack(std::uint64_t address, std::uint64_t& value) const {
    if (address < sp || address - sp > stack.size() || stack.size() - (address - sp) < 8) {
      return false;
    }
    std::memcpy(&value, stack.data() + (address - sp), sizeof value);
    return true;
  }

  // Memory outside the stack copy: the file bytes of a mapped ELF (code, read-only data).
  bool read_file(std::uint64_t address, std::uint64_t& value) {
    const Mapping* mapping = space->find(address);
    if (mapping == nullptr || mapping->end - address < sizeof value || mapping->path.empty() ||
        is_jit_code(*mapping)) {
      return false;
    }
    const std::uint64_t offset = address - mapping->start + mapping->pgoff;
    if (mapping->path.front() != '/') {
      const auto image = local_vdso().image;
      if (!is_local_vdso(*mapping) || offset > image.size() - sizeof value) return false;
      std::memcpy(&value, image.data() + offset, sizeof value);
      return true;
    }
    auto [it, fresh] = files.try_emplace(mapping->path, -1);
    if (fresh) it->second = open_regular_file(mapping->path);
    if (it->second < 0) return false;
    return pread(it->second, &value, sizeof value, static_cast<off_t>(offset)) ==
           static_cast<ssize_t>(sizeof value);
  }
};

namespace {

using Session = DwarfUnwinder::Session;

pid_t next_thread(Dwfl* dwfl, void* dwfl_arg, void** thread_argp) {
  if (*thread_argp != nullptr) return 0;  // one thread: the sampled one
  *thread_argp = dwfl_arg;
  return dwfl_pid(dwfl);
}

bool memory_read(Dwfl* /*dwfl*/, Dwarf_Addr address, Dwarf_Word* result, void* dwfl_arg) {
  auto* session = static_cast<Session*>(dwfl_arg);
  std::uint64_t value = 0;
  if (!session->read_stack(address, value) && !session->read_file(address, value)) return false;
  *result = value;
  return true;
}

bool set_initial_registers(Dwfl_Thread* thread, void* thread_arg) {
  auto* session = static_cast<Session*>(thread_arg);
  return dwfl_thread_state_registers(thread, 0, session->registers.size(),
                                     session->registers.data());
}

const Dwfl_Thread_Callbacks kThreadCallbacks = {
    .next_thread = next_thread,
    .get_thread = nullptr,
    .memory_read = memory_read,
    .set_initial_registers = set_initial_registers,
    .detach = nullptr,
    .thread_detach = nullptr,
};

int frame_callback(Dwfl_Frame* state, void* arg) {
  auto* session = static_cast<Session*>(arg);
  Dwarf_Addr pc = 0;
  if (!dwfl_frame_pc(state, &pc, nullptr)) return DWARF_CB_ABORT;
  // Asking dwfl_frame_pc whether the frame is an activation unwinds it to its caller, with the
  // CFI of the module dwfl knows at pc then: report that module first. The first frame is the
  // sampled pc (its module is reported before the walk); the others are return addresses, whose
  // call is at pc - 1.
  const bool first = session->frames->empty();
  if (!session->report_module(first ? pc : pc - 1)) {
    session->frames->push_back({pc, first});
    return DWARF_CB_ABORT;
  }
  bool activation = false;
  if (!dwfl_frame_pc(state, &pc, &activation)) return DWARF_CB_ABORT;
  session->frames->push_back({pc, activation});
  return session->frames->size() >= session->max_frames ? DWARF_CB_ABORT : DWARF_CB_OK;
}

}  // namespace

DwarfUnwinder::DwarfUnwinder() = default;
DwarfUnwinder::~DwarfUnwinder() = default;

void DwarfUnwinder::drop_session(std::uint64_t space_id) {
  if (auto it = session_of_space_.find(space_id); it != session_of_space_.end()) {
    sessions_.erase(it->second);
    session_of_space_.erase(it);
  }
}

DwarfUnwinder::Session& DwarfUnwinder::session_for(std::uint32_t pid, const AddressSpace& space) {
  if (auto it = session_of_space_.find(space.id()); it != session_of_space_.end()) {
    Session& session = **it->second;
    if (session.generation == space.generation() || session.modules_match(space)) {
      session.generation = space.generation();
      sessions_.splice(sessions_.begin(), sessions_, it->second);
      return session;
    }
    drop_session(space.id());
  }
  if (sessions_.size() >= kMaxSessions) drop_session(sessions_.back()->space_id);
  auto session = std::make_unique<Session>();
  session->dwfl = begin_offline_dwfl();
  session->pid = pid;
  session->space_id = space.id();
  session->generation = space.generation();
  sessions_.push_front(std::move(session));
  session_of_space_[space.id()] = sessions_.begin();
  return *sessions_.front();
}

std::vector<UnwoundFrame> DwarfUnwinder::unwind(std::uint32_t pid, const AddressSpace& space,
                                                const UserRegs& regs,
                                                std::span<const std::uint8_t> stack,
                                                std::size_t max_frames) {
  std::vector<UnwoundFrame> frames;
  std::array<std::uint64_t, 17> registers{};
  if (max_frames == 0 || !regs.dwarf_registers(registers)) return frames;
  const std::uint64_t ip = registers[kDwarfIp];

  // A second walk when the first met a stale module, with a session made anew.
  for (int attempt = 0; attempt < 2; ++attempt) {
    Session& session = session_for(pid, space);
    session.space = &space;
    session.registers = registers;
    session.sp = registers[kDwarfSp];
    session.stack = stack;
    session.frames = &frames;
    session.max_frames = max_frames;
    if (session.dwfl != nullptr && session.report_module(ip)) {
      if (!session.attached) {
        // dwfl takes the architecture from the first module's ELF: attach after reporting it.
        session.attached = dwfl_attach_state(session.dwfl, nullptr, static_cast<pid_t>(session.pid),
                                             &kThreadCallbacks, &session);
      }
      if (session.attached) {
        dwfl_getthread_frames(session.dwfl, static_cast<pid_t>(session.pid), frame_callback,
                              &session);
      }
    }
    session.frames = nullptr;
    if (!session.stale) break;
    drop_session(space.id());
    frames.clear();
  }
  if (frames.empty()) frames.push_back({ip, true});
  return frames;
}

}  // namespace userperf::report
