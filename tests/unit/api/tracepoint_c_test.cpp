// User tracepoints from C: tracepoint_c_fixture.c is compiled by the system C compiler (C11,
// -Wall -Wextra -Werror -Wshadow -Wpedantic) into a shared object that is dlopen'ed after its
// names were defined, as a plugin would be. Its weak references resolve to a small shim loaded
// RTLD_GLOBAL first, forwarding to this executable's userperf_tracepoint_* (a test executable does
// not export its symbols to objects it loads; the preloaded agent does). Skips without a C
// compiler.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "unit/api/tracepoint_support.hpp"
#include "userperf/userperf.h"

namespace userperf::testing {
namespace {

constexpr std::uint64_t kRequestId = 2001;
constexpr std::uint64_t kKindsId = 2002;

const char kShimSource[] = R"(
struct userperf_tracepoint;
typedef int (*register_fn)(struct userperf_tracepoint*);
typedef void (*unregister_fn)(struct userperf_tracepoint*);
typedef void (*fire_fn)(const struct userperf_tracepoint*, const void* const*, const void*);
static register_fn reg;
static unregister_fn unreg;
static fire_fn fire;
void shim_install(register_fn r, unregister_fn u, fire_fn f) { reg = r; unreg = u; fire = f; }
int userperf_tracepoint_register(struct userperf_tracepoint* tp) { return reg(tp); }
void userperf_tracepoint_unregister(struct userperf_tracepoint* tp) { unreg(tp); }
void userperf_tracepoint_fire(const struct userperf_tracepoint* tp, const void* const* args,
                              const void* call_site) {
  fire(tp, args, call_site);
}
)";

using InstallFn = void (*)(int (*)(userperf_tracepoint*), void (*)(userperf_tracepoint*),
                           void (*)(const userperf_tracepoint*, const void* const*, const void*));

class TracepointC : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::system("cc --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "no C compiler";
    char pattern[] = "/tmp/tracepoint-c-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    std::ofstream(dir_ + "/shim.c") << kShimSource;
    ASSERT_EQ(compile(dir_ + "/shim.c", dir_ + "/libshim.so"), "");
    ASSERT_EQ(compile(std::string(USERPERF_SOURCE_DIR) + "/tests/unit/api/tracepoint_c_fixture.c",
                      dir_ + "/libfixture.so"),
              "");
    shim_ = dlopen((dir_ + "/libshim.so").c_str(), RTLD_NOW | RTLD_GLOBAL);
    ASSERT_NE(shim_, nullptr) << dlerror();
    auto install = reinterpret_cast<InstallFn>(dlsym(shim_, "shim_install"));
    ASSERT_NE(install, nullptr);
    install(&userperf_tracepoint_register, &userperf_tracepoint_unregister,
            &userperf_tracepoint_fire);
    install_format_log();
  }
  void TearDown() override {
    if (fixture_ != nullptr) dlclose(fixture_);
    if (shim_ != nullptr) dlclose(shim_);
    if (!dir_.empty()) std::system(("rm -rf '" + dir_ + "'").c_str());
  }

  // Empty on success, else the compiler's messages.
  std::string compile(const std::string& source, const std::string& output) {
    const std::string log = dir_ + "/cc.log";
    const std::string command =
        "cc -std=c11 -O2 -Wall -Wextra -Werror -Wshadow -Wpedantic -fPIC -shared -I'" +
        std::string(USERPERF_SOURCE_DIR) + "/include' -o '" + output + "' '" + source + "' >'" +
        log + "' 2>&1";
    if (std::system(command.c_str()) == 0) return {};
    std::ifstream in(log);
    return "cc failed: " + std::string(std::istreambuf_iterator<char>(in), {});
  }
  template <class Fn>
  Fn symbol(const char* name) {
    return reinterpret_cast<Fn>(dlsym(fixture_, name));
  }

  std::string dir_;
  void* shim_ = nullptr;
  void* fixture_ = nullptr;
};

TEST_F(TracepointC, LoadedLateRecordsLikeCpp) {
  pmu::tracepoint_define(kRequestId, "ctest:request");
  pmu::tracepoint_define(kKindsId, "ctest:kinds");
  ThreadTracepointEvent ev(kRequestId);
  ASSERT_GE(ev.fd, 0);
  fixture_ = dlopen((dir_ + "/libfixture.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(fixture_, nullptr) << dlerror();
  // The constructor registered it: bound to the earlier definition, enabled, format reported.
  auto enabled = symbol<int (*)()>("ctest_request_enabled");
  ASSERT_NE(enabled, nullptr);
  EXPECT_EQ(enabled(), 1);
  ASSERT_EQ(FormatLog::instance().of(kRequestId).size(), 1u);
  EXPECT_NE(FormatLog::instance().of(kRequestId)[0].find(
                "print fmt: \"id=%llu path=%s status=%d\", REC->id, __get_str(path), "
                "REC->status\n"),
            std::string::npos);
  // Eight fields, every C spelling: bool u8, signed char s8, unsigned short u16, short s16,
  // unsigned long u64, long long s64, char* string, userperf_bytes.
  ASSERT_EQ(FormatLog::instance().of(kKindsId).size(), 1u);
  EXPECT_NE(FormatLog::instance().of(kKindsId)[0].find(
                "print fmt: \"flag=%hhu s8v=%hhd u16v=%hu s16v=%hd ul=%llu ll=%lld text=%s "
                "blob=%s\""),
            std::string::npos);

  auto fire = symbol<void (*)(std::uint64_t, const char*, std::int32_t)>("ctest_fire_request");
  ASSERT_NE(fire, nullptr);
  fire(5, "/x", -1);
  const auto samples = ev.samples();
  ASSERT_EQ(samples.size(), 1u);
  Bytes expected;
  expected.common(kRequestId, gettid())
      .put<std::uint64_t>(5)
      .put<std::uint32_t>(data_loc(3, 24))
      .put<std::int32_t>(-1)
      .text("/x", 3);
  EXPECT_EQ(samples[0].raw, expected.padded());
}

TEST_F(TracepointC, EveryKindFromC) {
  pmu::tracepoint_define(kKindsId, "ctest:kinds");
  ThreadTracepointEvent ev(kKindsId);
  ASSERT_GE(ev.fd, 0);
  fixture_ = dlopen((dir_ + "/libfixture.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(fixture_, nullptr) << dlerror();
  auto fire = symbol<void (*)()>("ctest_fire_kinds");
  ASSERT_NE(fire, nullptr);
  fire();  // true, -2, 65535, -3, 7ul, -4ll, "t", {0xde, 0xad}
  const auto samples = ev.samples();
  ASSERT_EQ(samples.size(), 1u);
  // flag @8, s8v @9, u16v @10, s16v @12, (pad) ul @16, ll @24, text loc @32, blob loc @36;
  // fixed part 40; "t\0" @40, blob @42.
  Bytes expected;
  expected.common(kKindsId, gettid())
      .put<std::uint8_t>(1)
      .put<std::int8_t>(-2)
      .put<std::uint16_t>(65535)
      .put<std::int16_t>(-3)
      .put<std::uint16_t>(0)
      .put<std::uint64_t>(7)
      .put<std::int64_t>(-4)
      .put<std::uint32_t>(data_loc(2, 40))
      .put<std::uint32_t>(data_loc(2, 42))
      .text("t", 2)
      .text("\xde\xad", 2);
  EXPECT_EQ(samples[0].raw, expected.padded());
}

TEST_F(TracepointC, UnloadingUnregisters) {
  // Defined first (each ctest entry runs this test in a process of its own): the descriptor binds
  // to the id when it registers.
  pmu::tracepoint_define(kRequestId, "ctest:request");
  fixture_ = dlopen((dir_ + "/libfixture.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(fixture_, nullptr) << dlerror();
  auto descriptor = symbol<userperf_tracepoint* (*)()>("ctest_request_descriptor");
  ASSERT_NE(descriptor, nullptr);
  userperf_tracepoint* tp = descriptor();
  ASSERT_NE(tp->library_slot, 0u);
  dlclose(fixture_);
  fixture_ = nullptr;
  // The registry forgot the descriptor: opening and closing events touches nothing unloaded.
  ThreadTracepointEvent ev(kRequestId);
  ASSERT_GE(ev.fd, 0);
  ev.close();
}

}  // namespace
}  // namespace userperf::testing
