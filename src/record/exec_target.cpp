#include "record/exec_target.hpp"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstring>

#include "record/protocol.hpp"

namespace userperf::record {
namespace {

// The start of the file, read once: the ELF header and its program headers (up to 17 of 64-bit
// ones; more are read one by one), or a "#!" line. Each of those was its own read: an exec in a
// recorded process pays for this check, often in a fork child, where the buffer is a stack page
// the child copies.
struct FileHead {
  unsigned char bytes[1024];
  std::size_t size = 0;

  template <class T>
  bool get(std::size_t at, T& out, int fd) const {
    if (at + sizeof out <= size) {
      std::memcpy(&out, bytes + at, sizeof out);
      return true;
    }
    return pread(fd, &out, sizeof out, static_cast<off_t>(at)) == static_cast<ssize_t>(sizeof out);
  }
};

// Whether the ELF file's program headers (of class Ehdr/Phdr) hold a PT_INTERP; a file that
// cannot be read as one counts as having one (the exec decides).
template <class Ehdr, class Phdr>
bool has_interpreter_of_class(const FileHead& head, int fd) {
  Ehdr header;
  if (!head.get(0, header, fd)) return true;
  for (unsigned i = 0; i < header.e_phnum; ++i) {
    Phdr ph;
    if (!head.get(header.e_phoff + i * sizeof ph, ph, fd)) return true;
    if (ph.p_type == PT_INTERP) return true;
  }
  return false;
}

// Whether the file, an ELF of either class, names a dynamic loader (PT_INTERP). Anything that is
// not an ELF counts as having one.
bool has_interpreter(const FileHead& head, int fd) {
  if (head.size < EI_NIDENT || std::memcmp(head.bytes, ELFMAG, SELFMAG) != 0) return true;
  if (head.bytes[EI_CLASS] == ELFCLASS64) {
    return has_interpreter_of_class<Elf64_Ehdr, Elf64_Phdr>(head, fd);
  }
  if (head.bytes[EI_CLASS] == ELFCLASS32) {
    return has_interpreter_of_class<Elf32_Ehdr, Elf32_Phdr>(head, fd);
  }
  return true;
}

// A "#!" script's interpreter path into `out`; false when the file is no script.
bool script_interpreter(const FileHead& head, char* out, std::size_t cap) {
  if (head.size < 3 || head.bytes[0] != '#' || head.bytes[1] != '!') return false;
  std::size_t at = 2;
  while (at < head.size && (head.bytes[at] == ' ' || head.bytes[at] == '\t')) ++at;
  std::size_t len = 0;
  while (at + len < head.size && at + len < 256 && head.bytes[at + len] != ' ' &&
         head.bytes[at + len] != '\t' && head.bytes[at + len] != '\n' &&
         head.bytes[at + len] != '\0') {
    ++len;
  }
  if (len == 0 || len >= cap) return false;
  std::memcpy(out, head.bytes + at, len);
  out[len] = '\0';
  return true;
}

ExecTarget check_file(const char* path, uid_t euid, gid_t egid, int depth) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ExecTarget::kUnknown;
  struct stat st {};
  ExecTarget result = ExecTarget::kEnterable;
  char interpreter[256];
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    result = ExecTarget::kUnknown;
  } else if (((st.st_mode & S_ISUID) && st.st_uid != euid) ||
             ((st.st_mode & S_ISGID) && (st.st_mode & S_IXGRP) && st.st_gid != egid) ||
             fgetxattr(fd, "security.capability", nullptr, 0) > 0) {
    result = ExecTarget::kSecure;
  } else {
    FileHead head;
    const ssize_t n = pread(fd, head.bytes, sizeof head.bytes, 0);
    head.size = n > 0 ? static_cast<std::size_t>(n) : 0;
    if (script_interpreter(head, interpreter, sizeof interpreter)) {
      if (depth == 0) result = check_file(interpreter, euid, egid, depth + 1);
    } else if (!has_interpreter(head, fd)) {
      result = ExecTarget::kStatic;
    }
  }
  close(fd);
  return result;
}

}  // namespace

const char* describe(ExecTarget target) {
  switch (target) {
    case ExecTarget::kEnterable:
      return "dynamically linked";
    case ExecTarget::kStatic:
      return "statically linked (no dynamic loader runs to preload the agent)";
    case ExecTarget::kSecure:
      return "setuid, setgid or with file capabilities (the loader ignores LD_PRELOAD)";
    case ExecTarget::kNoAgentEnv:
      return "run with an environment that drops LD_PRELOAD";
    case ExecTarget::kUnknown:
      break;
  }
  return "unreadable";
}

bool resolve_command(const char* file, const char* path_env, char* out, std::size_t cap) {
  if (file == nullptr || *file == '\0') return false;
  if (std::strchr(file, '/') != nullptr) {
    if (std::strlen(file) >= cap) return false;
    std::strcpy(out, file);
    return true;
  }
  const char* dirs = path_env != nullptr ? path_env : "/bin:/usr/bin";
  const std::size_t name = std::strlen(file);
  for (const char* d = dirs;;) {
    const char* end = std::strchr(d, ':');
    const std::size_t len = end != nullptr ? static_cast<std::size_t>(end - d) : std::strlen(d);
    // An empty entry is the current directory.
    const std::size_t dir_len = len == 0 ? 1 : len;
    if (dir_len + 1 + name < cap) {
      std::memcpy(out, len == 0 ? "." : d, dir_len);
      out[dir_len] = '/';
      std::memcpy(out + dir_len + 1, file, name + 1);
      struct stat st {};
      if (stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0) return true;
    }
    if (end == nullptr) return false;
    d = end + 1;
  }
}

ExecTarget check_exec_file(const char* path, uid_t euid, gid_t egid) {
  return check_file(path, euid, egid, 0);
}

ExecTarget check_exec_env(char* const envp[], const char* agent_path) {
  if (envp == nullptr) return ExecTarget::kNoAgentEnv;
  bool preloads = false;
  bool socket = false;
  const std::size_t socket_len = std::strlen(kSocketEnv);
  for (char* const* e = envp; *e != nullptr; ++e) {
    if (std::strncmp(*e, "LD_PRELOAD=", 11) == 0 && agent_path != nullptr &&
        std::strstr(*e + 11, agent_path) != nullptr) {
      preloads = true;
    }
    if (std::strncmp(*e, kSocketEnv, socket_len) == 0 && (*e)[socket_len] == '=') socket = true;
  }
  return preloads && socket ? ExecTarget::kEnterable : ExecTarget::kNoAgentEnv;
}

}  // namespace userperf::record
