// Expected<T>: a value or an Error (errno + message), for the runtime's fallible operations.
// (std::expected is C++23; g++ 12 builds C++20.)
#pragma once

#include <cerrno>
#include <string>
#include <utility>
#include <variant>

namespace userperf::bpf {

struct Error {
  int code = EINVAL;  // the kernel's errno for this failure, positive
  std::string message;
};

template <class T>
class Expected {
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
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

inline Error make_error(int code, std::string message) {
  return Error{code, std::move(message)};
}

}  // namespace userperf::bpf
