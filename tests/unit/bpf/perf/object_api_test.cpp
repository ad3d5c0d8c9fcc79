// The C API's open / set / load sequence (userperf_bpf_object_*), libbpf's bpf_object__open,
// bpf_map__set_* and bpf_object__load: sizes set before the load are the maps' sizes, the kernel's
// map-creation checks judge them at the load, and after the load the sizes are frozen (EBUSY).
#include <gtest/gtest.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "userperf/userperf.h"

namespace userperf::testing {
namespace {

struct KeyT {
  std::uint32_t pid;
  std::int32_t user_stack_id;
};

const std::string& sized_maps_path() {
  static const std::string path = std::string(USERPERF_BPF_OBJECT_DIR) + "/progs/sized_maps.bpf.o";
  return path;
}

// One object handle, closed at the end of the test.
struct Object {
  userperf_bpf_object* obj = userperf_bpf_object_open(sized_maps_path().c_str());
  ~Object() { userperf_bpf_object_close(obj); }
};

TEST(BpfObjectApi, MapsSizedAtRunTimeNeedTheirSizesBeforeTheLoad) {
  Object o;
  ASSERT_NE(o.obj, nullptr) << strerror(errno);
  std::uint32_t key_size = 1, value_size = 1, max_entries = 1;
  ASSERT_EQ(userperf_bpf_object_map_info(o.obj, "stackmap", &key_size, &value_size, &max_entries),
            0);
  EXPECT_EQ(key_size, 4u);
  EXPECT_EQ(value_size, 0u);
  EXPECT_EQ(max_entries, 0u);
  // As with the kernel: a STACK_TRACE map of value_size 0 cannot be created.
  char log[4096] = {};
  EXPECT_EQ(userperf_bpf_object_load(o.obj, nullptr, log, sizeof log), -1);
  EXPECT_EQ(errno, EINVAL) << log;
}

TEST(BpfObjectApi, SizesSetBeforeTheLoadAreTheMapsSizes) {
  Object o;
  ASSERT_NE(o.obj, nullptr) << strerror(errno);
  ASSERT_EQ(userperf_bpf_object_set_map_value_size(o.obj, "stackmap", 127 * 8), 0);
  ASSERT_EQ(userperf_bpf_object_set_map_max_entries(o.obj, "stackmap", 1024), 0);
  ASSERT_EQ(userperf_bpf_object_set_map_max_entries(o.obj, "counts", 64), 0);
  std::uint32_t value_size = 0, max_entries = 0;
  ASSERT_EQ(userperf_bpf_object_map_info(o.obj, "stackmap", nullptr, &value_size, &max_entries), 0);
  EXPECT_EQ(value_size, 127u * 8);
  EXPECT_EQ(max_entries, 1024u);

  char log[8192] = {};
  const int prog = userperf_bpf_object_load(o.obj, "do_perf_event", log, sizeof log);
  ASSERT_GE(prog, 0) << strerror(errno) << "\n" << log;

  // `counts` holds 64 elements, not the 2 it was compiled with.
  const int counts = userperf_bpf_map_fd(prog, "counts");
  ASSERT_GE(counts, 0) << strerror(errno);
  const std::uint64_t one = 1;
  for (std::uint32_t i = 0; i < 64; ++i) {
    const KeyT key{i, -1};
    ASSERT_EQ(userperf_bpf_map_update_elem(counts, &key, &one, BPF_NOEXIST), 0)
        << i << ": " << strerror(errno);
  }
  const KeyT extra{64, -1};
  EXPECT_EQ(userperf_bpf_map_update_elem(counts, &extra, &one, BPF_NOEXIST), -1);
  EXPECT_EQ(errno, E2BIG);

  // Loaded: sizes are frozen (libbpf's -EBUSY), and an object loads once (libbpf's -EINVAL).
  EXPECT_EQ(userperf_bpf_object_set_map_max_entries(o.obj, "counts", 128), -1);
  EXPECT_EQ(errno, EBUSY);
  EXPECT_EQ(userperf_bpf_object_set_map_value_size(o.obj, "stackmap", 8), -1);
  EXPECT_EQ(errno, EBUSY);
  EXPECT_EQ(userperf_bpf_object_set_map_key_size(o.obj, "counts", 8), -1);
  EXPECT_EQ(errno, EBUSY);
  EXPECT_EQ(userperf_bpf_object_load(o.obj, nullptr, nullptr, 0), -1);
  EXPECT_EQ(errno, EINVAL);

  EXPECT_EQ(userperf_close(counts), 0);
  EXPECT_EQ(userperf_close(prog), 0);
}

TEST(BpfObjectApi, KeySizeSetBeforeTheLoadIsCheckedByMapCreation) {
  Object o;
  ASSERT_NE(o.obj, nullptr) << strerror(errno);
  ASSERT_EQ(userperf_bpf_object_set_map_value_size(o.obj, "stackmap", 8), 0);
  ASSERT_EQ(userperf_bpf_object_set_map_max_entries(o.obj, "stackmap", 16), 0);
  ASSERT_EQ(userperf_bpf_object_set_map_key_size(o.obj, "counts", 0), 0);
  std::uint32_t key_size = 1;
  ASSERT_EQ(userperf_bpf_object_map_info(o.obj, "counts", &key_size, nullptr, nullptr), 0);
  EXPECT_EQ(key_size, 0u);
  char log[4096] = {};
  EXPECT_EQ(userperf_bpf_object_load(o.obj, nullptr, log, sizeof log), -1);
  EXPECT_EQ(errno, EINVAL) << log;  // the kernel's map_create: a hash map needs a key
  // A failed load is a load: the sizes stay frozen and a second attempt is refused.
  EXPECT_EQ(userperf_bpf_object_set_map_key_size(o.obj, "counts", 8), -1);
  EXPECT_EQ(errno, EBUSY);
  EXPECT_EQ(userperf_bpf_object_load(o.obj, nullptr, nullptr, 0), -1);
  EXPECT_EQ(errno, EINVAL);
}

TEST(BpfObjectApi, RefusesUnknownMapsAndGlobalData) {
  Object o;
  ASSERT_NE(o.obj, nullptr) << strerror(errno);
  EXPECT_EQ(userperf_bpf_object_set_map_max_entries(o.obj, "no_such_map", 4), -1);
  EXPECT_EQ(errno, ENOENT);
  EXPECT_EQ(userperf_bpf_object_map_info(o.obj, "no_such_map", nullptr, nullptr, nullptr), -1);
  EXPECT_EQ(errno, ENOENT);
  // .rodata is the section's bytes: its size is not the caller's to change.
  std::uint32_t value_size = 0;
  ASSERT_EQ(userperf_bpf_object_map_info(o.obj, "sized_ma.rodata", nullptr, &value_size, nullptr),
            0);
  EXPECT_EQ(value_size, 4u);
  EXPECT_EQ(userperf_bpf_object_set_map_value_size(o.obj, "sized_ma.rodata", 8), -1);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(userperf_bpf_object_set_map_max_entries(nullptr, "counts", 4), -1);
  EXPECT_EQ(errno, EINVAL);
}

std::uint64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

// Runs the loaded program on 100 ms of this thread's task-clock samples (1 ms periods) and
// returns the samples it counted in `counts`.
std::uint64_t counted_samples(int prog) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.sample_period = 1'000'000;
  attr.disabled = 1;
  const int fd = userperf_perf_event_open(&attr, 0, -1, -1, 0);
  EXPECT_GE(fd, 0) << strerror(errno);
  EXPECT_EQ(userperf_ioctl(fd, PERF_EVENT_IOC_SET_BPF, static_cast<unsigned long>(prog)), 0);
  EXPECT_EQ(userperf_ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
  const std::uint64_t end = thread_cpu_ns() + 100'000'000;
  volatile std::uint64_t sink = 0;
  while (thread_cpu_ns() < end) sink = sink + 1;
  EXPECT_EQ(userperf_ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0);
  userperf_close(fd);
  const int counts = userperf_bpf_map_fd(prog, "counts");
  std::uint64_t total = 0;
  KeyT key{};
  KeyT next{};
  const KeyT* previous = nullptr;
  while (userperf_bpf_map_get_next_key(counts, previous, &next) == 0) {
    std::uint64_t value = 0;
    EXPECT_EQ(userperf_bpf_map_lookup_elem(counts, &next, &value), 0);
    total += value;
    key = next;
    previous = &key;
  }
  userperf_close(counts);
  return total;
}

// sized_maps.bpf.c counts only samples of process `target_pid` (its .rodata) when it is set: the
// value set before the load is what the verifier and the program see.
std::uint64_t counted_with_target_pid(std::uint32_t target_pid) {
  Object o;
  EXPECT_NE(o.obj, nullptr) << strerror(errno);
  EXPECT_EQ(userperf_bpf_object_set_map_value_size(o.obj, "stackmap", 127 * 8), 0);
  EXPECT_EQ(userperf_bpf_object_set_map_max_entries(o.obj, "stackmap", 256), 0);
  EXPECT_EQ(userperf_bpf_object_set_map_max_entries(o.obj, "counts", 256), 0);
  EXPECT_EQ(userperf_bpf_object_set_map_initial_value(o.obj, "sized_ma.rodata", &target_pid, 4), 0)
      << strerror(errno);
  char log[8192] = {};
  const int prog = userperf_bpf_object_load(o.obj, nullptr, log, sizeof log);
  EXPECT_GE(prog, 0) << strerror(errno) << "\n" << log;
  if (prog < 0) return 0;
  // After the load: frozen (EBUSY), and the map holds the value that was set.
  EXPECT_EQ(userperf_bpf_object_set_map_initial_value(o.obj, "sized_ma.rodata", &target_pid, 4),
            -1);
  EXPECT_EQ(errno, EBUSY);
  const int rodata = userperf_bpf_map_fd(prog, "sized_ma.rodata");
  const std::uint32_t zero = 0;
  std::uint32_t stored = 0;
  EXPECT_EQ(userperf_bpf_map_lookup_elem(rodata, &zero, &stored), 0);
  EXPECT_EQ(stored, target_pid);
  userperf_close(rodata);
  const std::uint64_t counted = counted_samples(prog);
  userperf_close(prog);
  return counted;
}

TEST(BpfObjectApi, InitialValueSetBeforeTheLoadIsWhatTheProgramSees) {
  // CPU-time timers fire on scheduler ticks: 100 ms gives up to 100 samples, a few at least.
  EXPECT_GT(counted_with_target_pid(static_cast<std::uint32_t>(getpid())), 0u);
  EXPECT_EQ(counted_with_target_pid(static_cast<std::uint32_t>(getpid()) + 1), 0u);
}

TEST(BpfObjectApi, InitialValueNeedsGlobalDataOfTheMapsSize) {
  Object o;
  ASSERT_NE(o.obj, nullptr) << strerror(errno);
  const std::uint64_t eight = 8;
  EXPECT_EQ(userperf_bpf_object_set_map_initial_value(o.obj, "sized_ma.rodata", &eight, 8), -1);
  EXPECT_EQ(errno, EINVAL);  // the section is 4 bytes
  EXPECT_EQ(userperf_bpf_object_set_map_initial_value(o.obj, "counts", &eight, 8), -1);
  EXPECT_EQ(errno, EINVAL);  // not global data
  EXPECT_EQ(userperf_bpf_object_set_map_initial_value(o.obj, "no_such_map", &eight, 8), -1);
  EXPECT_EQ(errno, ENOENT);
}

// bpf_map__set_inner_map_fd's counterpart: a map-in-map's template replaced before the load is
// what slots are checked against (map_in_map.bpf.c: counts_b has 4 entries and no flags).
TEST(BpfObjectApi, InnerMapSetBeforeTheLoadIsTheTemplate) {
  const std::string path = std::string(USERPERF_BPF_OBJECT_DIR) + "/progs/map_in_map.bpf.o";
  userperf_bpf_object* obj = userperf_bpf_object_open(path.c_str());
  ASSERT_NE(obj, nullptr) << strerror(errno);
  EXPECT_EQ(userperf_bpf_object_set_map_inner_map(obj, "counts_a", BPF_MAP_TYPE_ARRAY, 4, 8, 4, 0),
            -1);
  EXPECT_EQ(errno, EINVAL) << "not a map-in-map";
  EXPECT_EQ(userperf_bpf_object_set_map_inner_map(obj, "nope", BPF_MAP_TYPE_ARRAY, 4, 8, 4, 0), -1);
  EXPECT_EQ(errno, ENOENT);
  ASSERT_EQ(userperf_bpf_object_set_map_inner_map(obj, "by_addr", BPF_MAP_TYPE_ARRAY, 4, 8, 64,
                                                  BPF_F_INNER_MAP),
            0)
      << strerror(errno);
  char log[16384] = {};
  const int prog = userperf_bpf_object_load(obj, "count", log, sizeof log);
  ASSERT_GE(prog, 0) << strerror(errno) << "\n" << log;
  EXPECT_EQ(userperf_bpf_object_set_map_inner_map(obj, "by_addr", BPF_MAP_TYPE_ARRAY, 4, 8, 4, 0),
            -1);
  EXPECT_EQ(errno, EBUSY);
  const int by_addr = userperf_bpf_map_fd(prog, "by_addr");
  const int counts_b = userperf_bpf_map_fd(prog, "counts_b");
  ASSERT_GE(by_addr, 0);
  ASSERT_GE(counts_b, 0);
  const std::uint64_t key = 1;
  const auto value = static_cast<std::uint32_t>(counts_b);
  EXPECT_EQ(userperf_bpf_map_update_elem(by_addr, &key, &value, BPF_ANY), -1);
  EXPECT_EQ(errno, EINVAL) << "counts_b lacks the template's BPF_F_INNER_MAP";
  userperf_close(counts_b);
  userperf_close(by_addr);
  userperf_close(prog);
  userperf_bpf_object_close(obj);
}

TEST(BpfObjectApi, OpenReportsTheLoadersErrno) {
  EXPECT_EQ(userperf_bpf_object_open("/nonexistent/x.bpf.o"), nullptr);
  EXPECT_EQ(errno, ENOENT);
  EXPECT_EQ(userperf_bpf_object_open(nullptr), nullptr);
  EXPECT_EQ(errno, EINVAL);
}

}  // namespace
}  // namespace userperf::testing
