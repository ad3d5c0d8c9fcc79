// The kernel as the oracle: every fixture program libbpf gets the kernel to accept must also be
// accepted when loaded from our image (maps created by spec, global data written and frozen,
// map references turned into fds), with its section's type (BPF_PROG_TYPE_PERF_EVENT for all but
// sections.bpf.c). Skips when bpf() is refused here.
#include <gtest/gtest.h>

#include <cstring>

#include "bpf/loader/elf_loader.hpp"
#include "support/kernel_bpf.hpp"
#include "unit/bpf/loader/fixture_objects.hpp"

namespace userperf::bpf {
namespace {

namespace kernel_bpf = testing::kernel_bpf;

// 0 when libbpf loads the fixture into the kernel, else the errno.
int libbpf_load_error(const std::string& fixture) {
  auto object = testing::libbpf_open(fixture);
  if (!object) return EINVAL;
  libbpf_print_fn_t previous = libbpf_set_print(nullptr);
  const int err = bpf_object__load(object.get());
  libbpf_set_print(previous);
  return -err;
}

// A function address (bpf_loop callback) in the program.
bool uses_callbacks(const ProgramImage& program) {
  for (const Insn& insn : program.insns) {
    if (is_lddw(insn) && insn.src_reg == BPF_PSEUDO_FUNC) return true;
  }
  return false;
}

class KernelAcceptsImage : public ::testing::TestWithParam<std::string> {};

TEST_P(KernelAcceptsImage, WheneverLibbpfLoadIsAccepted) {
  const int libbpf_error = libbpf_load_error(GetParam());
  if (kernel_bpf::kernel_refuses_bpf(libbpf_error)) {
    GTEST_SKIP() << "the kernel refuses bpf(): " << std::strerror(libbpf_error);
  }
  if (libbpf_error != 0) GTEST_SKIP() << "libbpf's own load fails: " << std::strerror(libbpf_error);
  auto image = load_elf_file(testing::fixture_path(GetParam()));
  ASSERT_TRUE(image.ok()) << image.error().message;
  for (std::size_t i = 0; i < image->programs.size(); ++i) {
    SCOPED_TRACE(image->programs[i].name);
    const auto loaded = kernel_bpf::load_image_program(*image, i, image->programs[i].prog_type);
    if (uses_callbacks(image->programs[i])) {
      // The kernel wants BTF func_info with callbacks, which an ObjectImage does not carry, and
      // stops there, before verifying. The instructions themselves equal the ones libbpf got
      // accepted (libbpf_crosscheck_test).
      EXPECT_EQ(loaded.error, EINVAL);
      EXPECT_NE(loaded.log.find("missing btf func_info"), std::string::npos) << loaded.log;
      continue;
    }
    EXPECT_EQ(loaded.error, 0) << std::strerror(loaded.error) << "\n" << loaded.log;
    EXPECT_GE(loaded.program.get(), 0);
    EXPECT_EQ(loaded.maps.size(), image->maps.size());
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, KernelAcceptsImage,
                         ::testing::ValuesIn(testing::loadable_fixtures()),
                         testing::fixture_test_name);

// The helper reports a refusal with the verifier's reason: the acceptance above can fail.
TEST(KernelBpfSupport, RefusedProgramReturnsErrnoAndLog) {
  auto image = load_elf_file(testing::fixture_path("filter_period"));
  ASSERT_TRUE(image.ok()) << image.error().message;
  image->programs[0].insns.pop_back();  // no exit: falls off the end
  const auto loaded = kernel_bpf::load_image_program(*image, 0, BPF_PROG_TYPE_PERF_EVENT);
  if (kernel_bpf::kernel_refuses_bpf(loaded.error)) {
    GTEST_SKIP() << "the kernel refuses bpf(): " << std::strerror(loaded.error);
  }
  EXPECT_EQ(loaded.error, EINVAL);
  EXPECT_LT(loaded.program.get(), 0);
  EXPECT_NE(loaded.log.find("prog_load"), std::string::npos) << loaded.log;
  EXPECT_GT(loaded.log.size(), std::string("prog_load: ").size()) << "no verifier log";
}

// GPL-only helpers need a GPL-compatible license: the kernel refuses maps_all's program when its
// image claims "MIT", so the image's license really reaches the kernel.
TEST(KernelBpfSupport, LicenseReachesTheKernel) {
  auto image = load_elf_file(testing::fixture_path("maps_all"));
  ASSERT_TRUE(image.ok()) << image.error().message;
  image->license = "MIT";
  const auto loaded = kernel_bpf::load_image_program(*image, 0, BPF_PROG_TYPE_PERF_EVENT);
  if (kernel_bpf::kernel_refuses_bpf(loaded.error)) {
    GTEST_SKIP() << "the kernel refuses bpf(): " << std::strerror(loaded.error);
  }
  EXPECT_EQ(loaded.error, EINVAL);
  EXPECT_NE(loaded.log.find("GPL"), std::string::npos) << loaded.log;
}

}  // namespace
}  // namespace userperf::bpf
