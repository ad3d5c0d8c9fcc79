// Starting the recorded command: the agent library to preload, the private socket the agents
// connect to, and fork+exec with the environment that tells the agent where and what to record.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "support/expected.hpp"

namespace userperf::record {

// The agent library, as a real path: $USERPERF_AGENT, else beside <dir of /proc/self/exe> where
// `cmake --install` puts it (USERPERF_INSTALLED_AGENT, relative to the bin directory:
// ../lib/userperf/libuserperf_agent.so by default), else where the build tree has it
// (build/bin/userperf and build/lib/libuserperf_agent.so); access(2)'s errno when it is missing.
Expected<std::string> find_agent();
// libuserperf_condvar.so in the agent's directory (condvar_versions.S: glibc's two versions of the
// condition-variable waits, for --off-cpu), or "" when it is not there (not built: not x86-64).
std::string find_condvar(const std::string& agent);

// A private directory (mkdtemp, mode 0700) holding the listening SOCK_SEQPACKET socket; both are
// removed by the destructor. The socket is non-blocking and close-on-exec.
class SocketDir {
 public:
  static Expected<std::unique_ptr<SocketDir>> create();
  ~SocketDir();
  SocketDir(const SocketDir&) = delete;
  SocketDir& operator=(const SocketDir&) = delete;

  int listen_fd() const { return fd_; }
  const std::string& socket_path() const { return socket_path_; }

  // Writes `bytes` as file `name` in the directory (gone with it), for the recorded processes to
  // read. Its path, or the errno of the open or write that failed.
  Expected<std::string> add_file(const std::string& name, const std::vector<std::uint8_t>& bytes);

  // Makes the directory, the socket and the files `uid`'s (root recording another user's running
  // process: its agent must reach the socket and read the files, and no one else may).
  Expected<void> give_to(uid_t uid, gid_t gid);

 private:
  SocketDir(std::string dir, std::string socket_path, int fd)
      : dir_(std::move(dir)), socket_path_(std::move(socket_path)), fd_(fd) {}
  std::string dir_;
  std::string socket_path_;
  int fd_;
  std::vector<std::string> files_;
};

struct SpawnRequest {
  std::vector<std::string> argv;  // argv[0] is looked up in PATH
  std::string agent;              // prepended to LD_PRELOAD
  std::string before_agent;       // preloaded before the agent when not empty (find_condvar)
  std::string socket_path;        // USERPERF_RECORD_SOCKET
  std::string config;             // USERPERF_RECORD_CONFIG (RecordConfig::encode)
};

// The environment of the command: this process's, with the three variables set.
std::vector<std::string> command_environment(const SpawnRequest& request);

// fork + exec. The child stays in this process group (^C reaches it as it reaches perf's). The pid,
// or the error; when the exec itself failed in the child (reported through a close-on-exec pipe;
// the child is reaped), *exec_errno is its errno ("cannot run 'x': No such file or directory"),
// else 0.
Expected<pid_t> spawn_command(const SpawnRequest& request, int* exec_errno);

}  // namespace userperf::record
