// The SCM_RIGHTS transport of the recorder <-> agent protocol: what a hostile peer sends never
// leaves a descriptor open in the receiver.
#include "record/transport.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "record/protocol.hpp"

namespace userperf::record {
namespace {

// The lowest free descriptor: any descriptor received and left open takes it.
int lowest_free_fd() {
  const int fd = dup(0);
  close(fd);
  return fd;
}

// An empty message reads as the connection's end (0); the memfd riding on it must not stay open
// in the receiver, which stops reading there. Found by fuzz/agent_protocol_fuzzer.cpp (a
// ThreadStart cut to 0 bytes leaked the recorder's copy of the ring memfd).
TEST(Transport, EmptyMessageWithDescriptorsClosesThem) {
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair), 0);
  const int memfd = memfd_create("transport-test", MFD_CLOEXEC);
  ASSERT_GE(memfd, 0);
  ASSERT_EQ(send_message(pair[0], "", 0, &memfd, 1), 0);
  close(memfd);
  const int free_before = lowest_free_fd();

  char buf[64];
  int fds[kMaxMessageFds];
  int nfds = -1;
  EXPECT_EQ(receive_message(pair[1], buf, sizeof buf, fds, kMaxMessageFds, &nfds), 0);
  EXPECT_EQ(nfds, 0);
  EXPECT_EQ(lowest_free_fd(), free_before);
  close(pair[0]);
  close(pair[1]);
}

// A message with a descriptor is received with it.
TEST(Transport, MessageWithDescriptorKeepsIt) {
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair), 0);
  const int memfd = memfd_create("transport-test", MFD_CLOEXEC);
  ASSERT_GE(memfd, 0);
  const std::uint64_t word = 7;
  ASSERT_EQ(send_message(pair[0], &word, sizeof word, &memfd, 1), 0);
  close(memfd);

  std::uint64_t got = 0;
  int fds[kMaxMessageFds];
  int nfds = -1;
  EXPECT_EQ(receive_message(pair[1], &got, sizeof got, fds, kMaxMessageFds, &nfds),
            static_cast<ssize_t>(sizeof got));
  EXPECT_EQ(got, 7u);
  ASSERT_EQ(nfds, 1);
  EXPECT_GE(fcntl(fds[0], F_GETFD), 0);
  close(fds[0]);
  close(pair[0]);
  close(pair[1]);
}

}  // namespace
}  // namespace userperf::record
