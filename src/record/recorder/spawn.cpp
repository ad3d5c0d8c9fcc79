#include "record/recorder/spawn.hpp"

#include <fcntl.h>
#include <limits.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "record/protocol.hpp"

extern char** environ;

namespace userperf::record {

Expected<std::string> find_agent() {
  std::string path;
  if (const char* env = std::getenv("USERPERF_AGENT"); env != nullptr && *env != '\0') {
    path = env;
    if (access(path.c_str(), R_OK) != 0) {
      const int err = errno;
      return make_error(err, "the agent library " + path + " (USERPERF_AGENT) is missing (" +
                                 std::strerror(err) + ")");
    }
  } else {
    char self[PATH_MAX] = {};
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
      const int err = n < 0 ? errno : ENOENT;
      return make_error(err, std::string("cannot read /proc/self/exe: ") + std::strerror(err));
    }
    std::string dir(self, static_cast<std::size_t>(n));
    dir = dir.substr(0, dir.rfind('/'));
    // Installed (cmake --install): bin/userperf and lib/userperf/libuserperf_agent.so, the path
    // between them the build's GNUInstallDirs gave; the build tree: bin/ and lib/.
    const std::string installed = dir + "/" + USERPERF_INSTALLED_AGENT;
    const std::string built = dir + "/../lib/libuserperf_agent.so";
    int err = 0;
    for (const std::string& candidate : {installed, built}) {
      if (access(candidate.c_str(), R_OK) == 0) {
        path = candidate;
        break;
      }
      if (err == 0 || err == ENOENT) err = errno;
    }
    if (path.empty()) {
      return make_error(err, "the agent library is missing: neither " + installed + " nor " +
                                 built + " can be read (" + std::strerror(err) +
                                 "); build the userperf_agent target or set USERPERF_AGENT");
    }
  }
  // The agent must be found from any directory the command changes to.
  if (char* real = realpath(path.c_str(), nullptr)) {
    path = real;
    std::free(real);
  }
  return path;
}

Expected<std::unique_ptr<SocketDir>> SocketDir::create() {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ =
      std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/userperf-record-XXXXXX";
  if (mkdtemp(templ.data()) == nullptr) {
    const int err = errno;
    return make_error(err, "cannot create a directory for the agents' socket (" + templ +
                               "): " + std::strerror(err));
  }
  const std::string path = templ + "/socket";
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) {
    rmdir(templ.c_str());
    return make_error(ENAMETOOLONG, "socket path too long: " + path);
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0 || bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 ||
      listen(fd, 128) != 0) {
    const int err = errno;
    if (fd >= 0) close(fd);
    unlink(path.c_str());
    rmdir(templ.c_str());
    return make_error(err, "cannot listen on " + path + ": " + std::strerror(err));
  }
  return std::unique_ptr<SocketDir>(new SocketDir(templ, path, fd));
}

Expected<std::string> SocketDir::add_file(const std::string& name,
                                          const std::vector<std::uint8_t>& bytes) {
  std::string path = dir_ + "/" + name;
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    const int err = errno;
    return make_error(err, path + ": " + std::strerror(err));
  }
  files_.push_back(path);
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      close(fd);
      return make_error(err, path + ": " + std::strerror(err));
    }
    done += static_cast<std::size_t>(n);
  }
  close(fd);
  return path;
}

Expected<void> SocketDir::give_to(uid_t uid, gid_t gid) {
  std::vector<std::string> paths = files_;
  paths.push_back(socket_path_);
  paths.push_back(dir_);
  for (const std::string& path : paths) {
    if (chown(path.c_str(), uid, gid) != 0) {
      const int err = errno;
      return make_error(err, "cannot give " + path + " to user " + std::to_string(uid) + ": " +
                                 std::strerror(err));
    }
  }
  return {};
}

SocketDir::~SocketDir() {
  for (const std::string& file : files_) unlink(file.c_str());
  close(fd_);
  unlink(socket_path_.c_str());
  rmdir(dir_.c_str());
}

std::string find_condvar(const std::string& agent) {
  const std::string path = agent.substr(0, agent.rfind('/') + 1) + "libuserperf_condvar.so";
  return access(path.c_str(), R_OK) == 0 ? path : std::string();
}

std::vector<std::string> command_environment(const SpawnRequest& request) {
  std::vector<std::string> env;
  // The condvar object goes first: the agent's wrappers find libc's functions with
  // dlvsym(RTLD_NEXT), which must not find its definitions of the same names.
  std::string preload =
      request.before_agent.empty() ? request.agent : request.before_agent + ":" + request.agent;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string key = entry.substr(0, entry.find('='));
    if (key == "LD_PRELOAD") {
      const std::string rest = entry.substr(key.size() + 1);
      if (!rest.empty()) preload += ":" + rest;
    } else if (key != kSocketEnv && key != kConfigEnv) {
      env.push_back(entry);
    }
  }
  env.push_back("LD_PRELOAD=" + preload);
  env.push_back(std::string(kSocketEnv) + "=" + request.socket_path);
  env.push_back(std::string(kConfigEnv) + "=" + request.config);
  return env;
}

Expected<pid_t> spawn_command(const SpawnRequest& request, int* exec_errno) {
  *exec_errno = 0;
  if (request.argv.empty()) return make_error(EINVAL, "no command to run");
  // Everything the child needs is built before fork: it only calls async-signal-safe functions.
  const std::vector<std::string> env = command_environment(request);
  std::vector<char*> argv, envp;
  for (const std::string& a : request.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    const int err = errno;
    return make_error(err, std::string("pipe: ") + std::strerror(err));
  }
  const pid_t pid = fork();
  if (pid < 0) {
    const int err = errno;
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    return make_error(err, std::string("fork: ") + std::strerror(err));
  }
  if (pid == 0) {
    close(pipe_fds[0]);
    execvpe(argv[0], argv.data(), envp.data());
    const int code = errno;
    [[maybe_unused]] const ssize_t n = write(pipe_fds[1], &code, sizeof code);
    _exit(127);
  }
  close(pipe_fds[1]);
  int code = 0;
  ssize_t n;
  do {
    n = read(pipe_fds[0], &code, sizeof code);
  } while (n < 0 && errno == EINTR);
  close(pipe_fds[0]);
  if (n == static_cast<ssize_t>(sizeof code)) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    *exec_errno = code;
    return make_error(code, "cannot run '" + request.argv[0] + "': " + std::strerror(code));
  }
  return pid;  // n == 0: the exec closed the pipe
}

}  // namespace userperf::record
