// What the agent cannot enter: the dynamic loader is what preloads it (LD_PRELOAD), so a program
// it never runs in, or runs in secure mode, is not recorded. Checked by `userperf record` before it
// starts the command (refused, with the way out) and by the agent's exec wrappers before a
// recorded process execs another program (the recorder names it at the end). Async-signal-safe:
// the exec wrappers may run in a signal handler or a vfork child; no allocation, plain syscalls.
#pragma once

#include <sys/types.h>

#include <cstddef>

namespace userperf::record {

enum class ExecTarget {
  kEnterable,   // a dynamically linked program (or a script whose interpreter is one)
  kStatic,      // an ELF without PT_INTERP: no dynamic loader runs
  kSecure,      // setuid/setgid to another user or group, or with file capabilities: the loader
                // runs in secure mode and ignores LD_PRELOAD
  kNoAgentEnv,  // the environment it gets has no LD_PRELOAD naming the agent
  kUnknown,     // cannot be read (the exec itself will say why)
};

// The reason as a short phrase ("statically linked", ...).
const char* describe(ExecTarget target);

// Resolves `file` as execvp does: itself when it contains a slash, else the first executable
// regular file of that name in `path_env` (PATH; "/bin:/usr/bin" when null). Writes it into
// `out` (size `cap`); false when none is found.
bool resolve_command(const char* file, const char* path_env, char* out, std::size_t cap);

// The file `path` as an exec target for a process whose effective ids are `euid`/`egid` (scripts
// are judged by their interpreter, one level deep).
ExecTarget check_exec_file(const char* path, uid_t euid, gid_t egid);

// Whether `envp` (an exec's environment, null-terminated) preloads `agent_path` and carries the
// recorder's socket: kEnterable or kNoAgentEnv.
ExecTarget check_exec_env(char* const envp[], const char* agent_path);

}  // namespace userperf::record
