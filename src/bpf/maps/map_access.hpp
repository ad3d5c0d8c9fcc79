// Checks every map type shares: the consumer's access rights (a BPF_F_RDONLY map's descriptor
// cannot write, a BPF_F_WRONLY one cannot read: -EPERM, as map_get_sys_perms) and the update
// flags (BPF_ANY, BPF_NOEXIST, BPF_EXIST; BPF_F_LOCK needs a bpf_spin_lock in the value, which
// maps without BTF never have: -EINVAL).
#pragma once

#include <cerrno>
#include <cstdint>

#include "bpf/isa/program_image.hpp"

namespace userperf::bpf {

inline int check_consumer_read(const MapSpec& spec) {
  return (spec.map_flags & BPF_F_WRONLY) ? -EPERM : 0;
}
inline int check_consumer_write(const MapSpec& spec) {
  return (spec.map_flags & BPF_F_RDONLY) ? -EPERM : 0;
}
// Programs of a BPF_F_RDONLY_PROG map may not write it (the verifier's check, repeated here).
inline int check_program_write(const MapSpec& spec) {
  return (spec.map_flags & BPF_F_RDONLY_PROG) ? -EPERM : 0;
}
inline int check_update_flags(std::uint64_t flags) {
  if ((flags & ~std::uint64_t{BPF_F_LOCK}) > BPF_EXIST) return -EINVAL;
  if (flags & BPF_F_LOCK) return -EINVAL;  // no map here has a bpf_spin_lock
  return 0;
}

}  // namespace userperf::bpf
