#include "report/dwarf_unwinder.hpp"

#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cstring>

#include "report/elf_file.hpp"

namespace userperf::report {

struct DwarfUnwinder::Session {
  Dwfl* dwfl = nullptr;
  bool attached = false;
  std::uint32_t pid = 0;
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

  // Makes sure dwfl knows the ELF file mapped at `pc`; false when it cannot (no mapping, no file).
  bool report_module(std::uint64_t pc) {
    if (dwfl_addrmodule(dwfl, pc) != nullptr) return true;
    const Mapping* mapping = space->find(pc);
    if (mapping == nullptr || mapping->path.empty() || mapping->path.front() != '/') return false;
    dwfl_report_begin_add(dwfl);
    Dwfl_Module* module = dwfl_report_elf(dwfl, mapping->path.c_str(), mapping->path.c_str(), -1,
                                          mapping->start - mapping->pgoff, false);
    dwfl_report_end(dwfl, nullptr, nullptr);
    return module != nullptr && dwfl_addrmodule(dwfl, pc) == module;
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
        mapping->path.front() != '/') {
      return false;
    }
    auto [it, fresh] = files.try_emplace(mapping->path, -1);
    if (fresh) it->second = open(mapping->path.c_str(), O_RDONLY | O_CLOEXEC);
    if (it->second < 0) return false;
    const std::uint64_t offset = address - mapping->start + mapping->pgoff;
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
  bool activation = false;
  if (!dwfl_frame_pc(state, &pc, &activation)) return DWARF_CB_ABORT;
  session->frames->push_back({pc, activation});
  if (session->frames->size() >= session->max_frames) return DWARF_CB_ABORT;
  // The next step needs the CFI of the module holding this frame's pc.
  return session->report_module(activation ? pc : pc - 1) ? DWARF_CB_OK : DWARF_CB_ABORT;
}

}  // namespace

DwarfUnwinder::DwarfUnwinder() = default;
DwarfUnwinder::~DwarfUnwinder() = default;

std::vector<UnwoundFrame> DwarfUnwinder::unwind(std::uint32_t pid, const AddressSpace& space,
                                                const UserRegs& regs,
                                                std::span<const std::uint8_t> stack,
                                                std::size_t max_frames) {
  std::vector<UnwoundFrame> frames;
  std::array<std::uint64_t, 17> registers{};
  if (max_frames == 0 || !regs.dwarf_registers(registers)) return frames;
  const std::uint64_t ip = registers[kDwarfIp];

  auto& slot = sessions_[space.id()];
  if (!slot) {
    slot = std::make_unique<Session>();
    slot->dwfl = begin_offline_dwfl();
    slot->pid = pid;
  }
  Session& session = *slot;
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
  if (frames.empty()) frames.push_back({ip, true});
  session.frames = nullptr;
  return frames;
}

}  // namespace userperf::report
