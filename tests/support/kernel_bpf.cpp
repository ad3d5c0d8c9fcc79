#include "support/kernel_bpf.hpp"

#include <bpf/libbpf.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace userperf::testing::kernel_bpf {
namespace {

int sys_bpf(int cmd, bpf_attr& attr) {
  const long ret = syscall(__NR_bpf, cmd, &attr, sizeof attr);
  return ret < 0 ? -errno : static_cast<int>(ret);
}

std::uint64_t to_u64(const void* pointer) {
  return reinterpret_cast<std::uintptr_t>(pointer);
}

LoadedProgram failed(LoadedProgram result, int error, std::string log) {
  result.error = error;
  result.log = std::move(log);
  return result;
}

}  // namespace

ScopedFd& ScopedFd::operator=(ScopedFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = other.release();
  }
  return *this;
}

ScopedFd::~ScopedFd() {
  if (fd_ >= 0) close(fd_);
}

int ScopedFd::release() {
  return std::exchange(fd_, -1);
}

int map_create(const bpf::MapSpec& spec) {
  bpf_attr attr{};
  attr.map_type = spec.type;
  attr.key_size = spec.key_size;
  attr.value_size = spec.value_size;
  attr.max_entries = spec.max_entries;
  if (spec.type == BPF_MAP_TYPE_PERF_EVENT_ARRAY && spec.max_entries == 0) {
    const int cpus = libbpf_num_possible_cpus();
    if (cpus < 0) return cpus;
    attr.max_entries = static_cast<std::uint32_t>(cpus);
  }
  attr.map_flags = spec.map_flags;
  std::strncpy(attr.map_name, spec.name.c_str(), sizeof attr.map_name - 1);
  // A map-in-map: its template becomes a real map for inner_map_fd (what libbpf's load does),
  // closed once the outer map holds its meta.
  ScopedFd inner;
  if (const bpf::MapSpec* templ = bpf::inner_map_template(spec)) {
    const int fd = map_create(*templ);
    if (fd < 0) return fd;
    inner = ScopedFd(fd);
    attr.inner_map_fd = static_cast<std::uint32_t>(fd);
  }
  return sys_bpf(BPF_MAP_CREATE, attr);
}

int map_update(int map_fd, const void* key, const void* value, std::uint64_t flags) {
  bpf_attr attr{};
  attr.map_fd = static_cast<std::uint32_t>(map_fd);
  attr.key = to_u64(key);
  attr.value = to_u64(value);
  attr.flags = flags;
  return sys_bpf(BPF_MAP_UPDATE_ELEM, attr);
}

int map_freeze(int map_fd) {
  bpf_attr attr{};
  attr.map_fd = static_cast<std::uint32_t>(map_fd);
  return sys_bpf(BPF_MAP_FREEZE, attr);
}

ProgLoadResult prog_load(std::uint32_t prog_type, std::span<const bpf::Insn> insns,
                         const std::string& license, std::uint32_t kern_version, bool stats) {
  auto attempt = [&](std::string* log) {
    bpf_attr attr{};
    attr.prog_type = prog_type;
    attr.insns = to_u64(insns.data());
    attr.insn_cnt = static_cast<std::uint32_t>(insns.size());
    attr.license = to_u64(license.c_str());
    attr.kern_version = kern_version;
    if (log != nullptr) {
      attr.log_level = stats ? 4 : 1;  // BPF_LOG_STATS
      attr.log_buf = to_u64(log->data());
      attr.log_size = static_cast<std::uint32_t>(log->size());
    }
    return sys_bpf(BPF_PROG_LOAD, attr);
  };
  ProgLoadResult result;
  if (stats) {
    std::string log(std::size_t{1} << 16, '\0');
    const int fd = attempt(&log);
    log.resize(std::strlen(log.c_str()));
    result.log = std::move(log);
    if (fd >= 0) {
      result.fd = fd;
    } else {
      result.error = -fd;
    }
    return result;
  }
  const int fd = attempt(nullptr);
  if (fd >= 0) {
    result.fd = fd;
    return result;
  }
  result.error = -fd;
  // Again with a log, for the reason (a refused program is refused the same way).
  std::string log(std::size_t{16} << 20, '\0');
  const int again = attempt(&log);
  if (again >= 0) close(again);
  log.resize(std::strlen(log.c_str()));
  result.log = std::move(log);
  return result;
}

bool kernel_refuses_bpf(int error) {
  return error == EPERM || error == ENOSYS;
}

LoadedProgram load_image_program(const bpf::ObjectImage& image, std::size_t program_index,
                                 std::uint32_t prog_type, bool stats) {
  LoadedProgram result;
  for (const bpf::MapSpec& spec : image.maps) {
    const int fd = map_create(spec);
    if (fd < 0) return failed(std::move(result), -fd, "map_create(" + spec.name + ")");
    result.maps.emplace_back(fd);
    if (!spec.global_data) continue;
    const std::uint32_t zero = 0;
    if (int err = map_update(fd, &zero, spec.initial_value.data()); err < 0) {
      return failed(std::move(result), -err, "map_update(" + spec.name + ")");
    }
    if (spec.map_flags & BPF_F_RDONLY_PROG) {
      if (int err = map_freeze(fd); err < 0) {
        return failed(std::move(result), -err, "map_freeze(" + spec.name + ")");
      }
    }
  }
  if (program_index >= image.programs.size()) {
    return failed(std::move(result), EINVAL, "no such program");
  }
  std::vector<bpf::Insn> insns = image.programs[program_index].insns;
  for (std::size_t i = 0; i + 1 < insns.size(); ++i) {
    if (!bpf::is_lddw(insns[i])) continue;
    const std::uint8_t src = insns[i].src_reg;
    if (src == BPF_PSEUDO_MAP_IDX || src == BPF_PSEUDO_MAP_IDX_VALUE) {
      const auto index = static_cast<std::size_t>(insns[i].imm);
      if (index >= result.maps.size()) {
        return failed(std::move(result), EINVAL, "map index out of range");
      }
      insns[i].src_reg = src == BPF_PSEUDO_MAP_IDX ? BPF_PSEUDO_MAP_FD : BPF_PSEUDO_MAP_VALUE;
      insns[i].imm = result.maps[index].get();
    }
    ++i;  // the lddw's second half
  }
  ProgLoadResult loaded = prog_load(prog_type, insns, image.license, image.kern_version, stats);
  if (stats) result.stats_log = loaded.log;
  if (loaded.fd < 0) return failed(std::move(result), loaded.error, "prog_load: " + loaded.log);
  result.program = ScopedFd(loaded.fd);
  return result;
}

}  // namespace userperf::testing::kernel_bpf
