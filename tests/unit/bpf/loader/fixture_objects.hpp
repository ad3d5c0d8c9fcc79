// The loader tests' fixtures (tests/data/bpf/progs/*.bpf.c, compiled by the build) and libbpf's
// own view of them, the reference the loader is compared with.
#pragma once

#include <bpf/libbpf.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

namespace userperf::testing {

// Fixtures with at least one program; maps_only has none.
inline const std::vector<std::string>& loadable_fixtures() {
  static const std::vector<std::string> names = {"filter_period", "maps_all",      "globals",
                                                 "subprogs",      "callback_loop", "license_mit",
                                                 "sections"};
  return names;
}

// gtest's name for a test parameterised by fixture name.
inline std::string fixture_test_name(const ::testing::TestParamInfo<std::string>& param) {
  return param.param;
}

inline std::string fixture_path(const std::string& name) {
  return std::string(USERPERF_BPF_OBJECT_DIR) + "/progs/" + name + ".bpf.o";
}

inline std::vector<std::uint8_t> read_fixture(const std::string& name) {
  std::ifstream file(fixture_path(name), std::ios::binary);
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

struct BpfObjectCloser {
  void operator()(bpf_object* object) const { bpf_object__close(object); }
};
using BpfObjectPtr = std::unique_ptr<bpf_object, BpfObjectCloser>;

// libbpf's open of a fixture (nothing reaches the kernel), with its messages silenced.
inline BpfObjectPtr libbpf_open(const std::string& name) {
  libbpf_print_fn_t previous = libbpf_set_print(nullptr);
  BpfObjectPtr object(bpf_object__open_file(fixture_path(name).c_str(), nullptr));
  libbpf_set_print(previous);
  return object;
}

}  // namespace userperf::testing
