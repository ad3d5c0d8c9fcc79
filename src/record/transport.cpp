#include "record/transport.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "record/protocol.hpp"

namespace userperf::record {

int send_message(int socket, const void* message, std::size_t size, const int* fds, int nfds) {
  if (nfds < 0 || nfds > kMaxMessageFds) return -EINVAL;
  iovec iov{const_cast<void*>(message), size};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxMessageFds)] = {};
  if (nfds > 0) {
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * static_cast<std::size_t>(nfds));
    cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int) * static_cast<std::size_t>(nfds));
    std::memcpy(CMSG_DATA(cmsg), fds, sizeof(int) * static_cast<std::size_t>(nfds));
  }
  for (;;) {
    const ssize_t n = sendmsg(socket, &msg, MSG_NOSIGNAL);
    if (n >= 0) return static_cast<std::size_t>(n) == size ? 0 : -EMSGSIZE;
    if (errno != EINTR) return -errno;
  }
}

ssize_t receive_message(int socket, void* buf, std::size_t cap, int* fds, int max_fds, int* nfds) {
  *nfds = 0;
  iovec iov{buf, cap};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxMessageFds)] = {};
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n;
  do {
    n = recvmsg(socket, &msg, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return -errno;
  bool truncated = (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0;
  for (cmsghdr* cmsg = CMSG_FIRSTHDR(&msg); cmsg != nullptr; cmsg = CMSG_NXTHDR(&msg, cmsg)) {
    if (cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t count = (cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < count; ++i) {
      int fd = -1;
      std::memcpy(&fd, CMSG_DATA(cmsg) + i * sizeof(int), sizeof fd);
      if (*nfds < max_fds) {
        fds[(*nfds)++] = fd;
      } else {
        close(fd);
        truncated = true;
      }
    }
  }
  if (truncated) {
    for (int i = 0; i < *nfds; ++i) close(fds[i]);
    *nfds = 0;
    return -EMSGSIZE;
  }
  // An empty message reads like the connection's end (0): callers stop there and would never
  // close the descriptors a hostile peer attached to it.
  if (n == 0) {
    for (int i = 0; i < *nfds; ++i) close(fds[i]);
    *nfds = 0;
  }
  return n;
}

}  // namespace userperf::record
