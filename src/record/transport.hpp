// Sending and receiving protocol messages (protocol.hpp) with descriptors over a unix
// SOCK_SEQPACKET socket: one message per datagram, descriptors as SCM_RIGHTS.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace userperf::record {

// Sends `size` bytes and `nfds` descriptors as one message (MSG_NOSIGNAL: a dead recorder is an
// EPIPE, not a SIGPIPE in the traced program). 0 or -errno.
int send_message(int socket, const void* message, std::size_t size, const int* fds = nullptr,
                 int nfds = 0);

// Receives one message into buf (capacity cap) and up to max_fds descriptors (received ones are
// O_CLOEXEC). Returns its size, 0 at end of connection (or for an empty message, whose
// descriptors are closed: no protocol message is empty), or -errno: -EMSGSIZE when the message or
// its descriptors were truncated (the descriptors received are closed). *nfds is set in every case.
ssize_t receive_message(int socket, void* buf, std::size_t cap, int* fds, int max_fds, int* nfds);

}  // namespace userperf::record
