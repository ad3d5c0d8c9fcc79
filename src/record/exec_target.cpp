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

// Whether the ELF file's program headers (of class Ehdr/Phdr) hold a PT_INTERP; a file that
// cannot be read as one counts as having one (the exec decides).
template <class Ehdr, class Phdr>
bool has_interpreter_of_class(int fd) {
  Ehdr header;
  if (pread(fd, &header, sizeof header, 0) != static_cast<ssize_t>(sizeof header)) return true;
  for (unsigned i = 0; i < header.e_phnum; ++i) {
    Phdr ph;
    const off_t at = static_cast<off_t>(header.e_phoff + i * sizeof ph);
    if (pread(fd, &ph, sizeof ph, at) != static_cast<ssize_t>(sizeof ph)) return true;
    if (ph.p_type == PT_INTERP) return true;
  }
  return false;
}

// Whether the open file, an ELF of either class, names a dynamic loader (PT_INTERP). Anything
// that is not an ELF counts as having one.
bool has_interpreter(int fd) {
  unsigned char ident[EI_NIDENT];
  if (pread(fd, ident, sizeof ident, 0) != static_cast<ssize_t>(sizeof ident) ||
      std::memcmp(ident, ELFMAG, SELFMAG) != 0) {
    return true;
  }
  if (ident[EI_CLASS] == ELFCLASS64) return has_interpreter_of_class<Elf64_Ehdr, Elf64_Phdr>(fd);
  if (ident[EI_CLASS] == ELFCLASS32) return has_interpreter_of_class<Elf32_Ehdr, Elf32_Phdr>(fd);
  return true;
}

// A "#!" script's interpreter path into `out`; false when the file is no script.
bool script_interpreter(int fd, char* out, std::size_t cap) {
  char line[256];
  const ssize_t n = pread(fd, line, sizeof line - 1, 0);
  if (n < 3 || line[0] != '#' || line[1] != '!') return false;
  line[n] = '\0';
  const char* p = line + 2;
  while (*p == ' ' || *p == '\t') ++p;
  std::size_t len = 0;
  while (p[len] != '\0' && p[len] != ' ' && p[len] != '\t' && p[len] != '\n') ++len;
  if (len == 0 || len >= cap) return false;
  std::memcpy(out, p, len);
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
  } else if (script_interpreter(fd, interpreter, sizeof interpreter)) {
    if (depth == 0) result = check_file(interpreter, euid, egid, depth + 1);
  } else if (!has_interpreter(fd)) {
    result = ExecTarget::kStatic;
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
