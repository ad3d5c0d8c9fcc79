// userperf's error conventions, one per layer (libbpf's libbpf_err() and the kernel's ERR_PTR are
// the models; docs/architecture.md, "Errors"):
//   - signal paths and the syscall surface (core's Engine, the BPF registry): a negative errno int
//     as the kernel returns it, or a status enum; a pointer-returning call uses err_ptr();
//   - the C API: -1 with errno set (syscall_return), MAP_FAILED for mmap;
//   - everything else (parsers, loaders, the recorder, the tools): Expected<T>, a value or one
//     Error{code, message, offset}.
// (std::expected is C++23; g++ 12 builds C++20.) In namespace userperf so that every module names
// the one Error and Expected unqualified.
#pragma once

#include <cerrno>
#include <cstdint>
#include <string>
#include <utility>
#include <variant>

namespace userperf {

// The kernel-internal ENOTSUPP (524), which BPF_PROG_LOAD and BPF_MAP_CREATE pass on to user
// space for some refusals; no libc names it.
inline constexpr int kEnotsupp = 524;

struct Error {
  static constexpr std::uint64_t kNoOffset = ~std::uint64_t{0};
  int code = EINVAL;                 // the kernel's errno for this failure, positive
  std::string message;               // what failed, for a person; names the field and value
  std::uint64_t offset = kNoOffset;  // where in the input (a file offset), kNoOffset if nowhere
  bool has_offset() const { return offset != kNoOffset; }
};

inline Error make_error(int code, std::string message, std::uint64_t offset = Error::kNoOffset) {
  return Error{code, std::move(message), offset};
}

template <class T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}  // NOLINT: implicit, as std::expected
  Expected(Error error) : v_(std::move(error)) {}
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() { return std::get<0>(v_); }
  const T& value() const { return std::get<0>(v_); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// Success or an Error: `return {};` succeeds.
template <>
class [[nodiscard]] Expected<void> {
 public:
  Expected() = default;
  Expected(Error error) : v_(std::move(error)) {}  // NOLINT: implicit, as std::expected
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<std::monostate, Error> v_;
};

// The kernel's ERR_PTR/IS_ERR/PTR_ERR: a pointer-returning syscall-surface call encodes a negative
// errno in the pointer (the top 4095 addresses are never mapped).
inline void* err_ptr(int negative_errno) {
  return reinterpret_cast<void*>(static_cast<std::intptr_t>(negative_errno));
}
inline bool is_err(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) >= static_cast<std::uintptr_t>(-4095);
}
inline int ptr_err(const void* p) {
  return static_cast<int>(reinterpret_cast<std::intptr_t>(p));
}

// libbpf_err(): a C entry point's result from a negative-errno one: errno set, -1 returned.
template <class T>
T syscall_return(T rc) {
  if (rc < 0) {
    errno = static_cast<int>(-rc);
    return -1;
  }
  return rc;
}

}  // namespace userperf
