// mmap of an event, kernel vs userperf (kernel-perf-spec §1.1/1.2, §9 checks 1–6; kernel-oracle.md
// "mmap sizes", "mmap variants"): errnos and the control page of a fresh buffer.
#include <cstddef>
#include <string>

#include "conformance/kernel_support.hpp"
#include "support/tsc_clock.hpp"

namespace userperf::conformance {
namespace {

class Mmap : public TargetTest {
 protected:
  // mmap of `pages` pages of e at `offset`: 0, or the errno.
  int try_map(const Event& e, std::size_t pages, int prot = PROT_READ | PROT_WRITE,
              int flags = MAP_SHARED, off_t offset = 0) {
    int err = 0;
    void* p = perf().mmap(pages * kPage, prot, flags, e.fd(), offset, &err);
    if (p != nullptr) perf().munmap(p, pages * kPage);
    return err;
  }
};

TEST_P(Mmap, DataPagesMustBeZeroOrAPowerOfTwo) {
  Event e(perf(), clock_attr(PERF_SAMPLE_IP));
  ASSERT_TRUE(e.ok()) << strerror(e.error());
  EXPECT_EQ(try_map(e, 1 + 3), EINVAL);
  EXPECT_EQ(try_map(e, 1 + 4), 0);
  EXPECT_EQ(try_map(e, 1 + 1), 0);
  EXPECT_EQ(try_map(e, 1), 0);  // control page only
}

TEST_P(Mmap, PrivateMappingIsRefused) {
  Event e(perf(), clock_attr(PERF_SAMPLE_IP));
  ASSERT_TRUE(e.ok()) << strerror(e.error());
  EXPECT_EQ(try_map(e, 1 + 1, PROT_READ | PROT_WRITE, MAP_PRIVATE), EINVAL);
  EXPECT_EQ(try_map(e, 1 + 1, PROT_READ, MAP_PRIVATE), EINVAL);
}

// Inherited per-task events would write into one buffer from many CPUs.
TEST_P(Mmap, InheritWithoutCpuIsRefused) {
  perf_event_attr attr = clock_attr(PERF_SAMPLE_IP | PERF_SAMPLE_TID);
  attr.inherit = 1;
  Event e(perf(), attr);
  ASSERT_TRUE(e.ok()) << strerror(e.error());
  EXPECT_EQ(try_map(e, 1 + 1), EINVAL);
  EXPECT_EQ(try_map(e, 1), EINVAL);
}

// A non-zero offset is the AUX area, which needs aux_offset/aux_size in the control page first.
TEST_P(Mmap, NonZeroOffsetWithoutAuxGeometry) {
  Event e(perf(), clock_attr(PERF_SAMPLE_IP));
  ASSERT_TRUE(e.ok()) << strerror(e.error());
  Ring ring(perf(), e.fd(), 1);
  ASSERT_TRUE(ring.ok());
  EXPECT_EQ(try_map(e, 1, PROT_READ | PROT_WRITE, MAP_SHARED, 2 * kPage), EINVAL);
}

// A second mapping of the same size maps the same buffer (one control page); another size is
// refused while the first one lives.
TEST_P(Mmap, SecondMappingSharesTheBuffer) {
  Event e(perf(), clock_attr(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME));
  ASSERT_TRUE(e.ok()) << strerror(e.error());
  Ring first(perf(), e.fd(), 2);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(try_map(e, 1 + 4), EINVAL);
  EXPECT_EQ(try_map(e, 1), EINVAL);
  Ring second(perf(), e.fd(), 2);
  ASSERT_TRUE(second.ok()) << strerror(second.error());
  EXPECT_NE(first.control(), second.control());
  // aux_offset is a user-written field: a store through one mapping shows through the other.
  first.control()->aux_offset = 0x12345000;
  EXPECT_EQ(second.control()->aux_offset, 0x12345000u);
  first.control()->aux_offset = 0;
  ASSERT_EQ(e.enable(), 0);
  EXPECT_TRUE(burn_until([&] { return first.head() >= 2 * 32; }, 2000));
  ASSERT_EQ(e.disable(), 0);
  EXPECT_EQ(second.head(), first.head());
  EXPECT_EQ(second.drain().size(), first.head() / 32);
  EXPECT_EQ(first.tail(), first.head());
}

// A perf mapping cannot be split.
TEST_P(Mmap, PartialMunmapIsRefused) {
  Event e(perf(), clock_attr(PERF_SAMPLE_IP));
  ASSERT_TRUE(e.ok()) << strerror(e.error());
  int err = 0;
  void* p = perf().mmap(3 * kPage, PROT_READ | PROT_WRITE, MAP_SHARED, e.fd(), 0, &err);
  ASSERT_NE(p, nullptr) << strerror(err);
  EXPECT_EQ(perf().munmap(static_cast<char*>(p) + 2 * kPage, kPage), -EINVAL);
  EXPECT_EQ(perf().munmap(p, kPage), -EINVAL);
  EXPECT_EQ(perf().munmap(p, 3 * kPage), 0);
}

struct ControlPage {
  std::uint32_t version, compat_version, size;
  std::uint64_t capabilities, data_head, data_tail, data_offset, data_size;
  std::uint64_t aux_head, aux_tail, aux_offset, aux_size;
  std::uint16_t time_shift;
  std::uint32_t time_mult;
};

ControlPage snapshot(const perf_event_mmap_page& p) {
  return {p.version,    p.compat_version, p.size,       p.capabilities, p.data_head,
          p.data_tail,  p.data_offset,    p.data_size,  p.aux_head,     p.aux_tail,
          p.aux_offset, p.aux_size,       p.time_shift, p.time_mult};
}

// cap_user_time and cap_user_time_zero. The kernel sets them (arch_perf_update_userpage, x86) only
// when its perf clock is the TSC's (native sched_clock, stable); in a KVM guest whose sched_clock
// is kvm-clock's it leaves them and the conversion at 0. userperf sets them when its TIME comes
// from its TSC clock (support/tsc_clock.hpp; docs/architecture.md, "Intended differences").
constexpr std::uint64_t kUserTimeBits = (1u << 3) | (1u << 4);

// The time fields agree with the page's cap bits: a conversion only under cap_user_time.
void expect_user_time_consistent(const ControlPage& p) {
  if ((p.capabilities & kUserTimeBits) == 0) {
    EXPECT_EQ(p.time_mult, 0u);
    EXPECT_EQ(p.time_shift, 0u);
  } else {
    EXPECT_NE(p.time_mult, 0u);
  }
}

ControlPage fresh_control_page(const Perf& perf, std::size_t data_pages) {
  Event e(perf, clock_attr(PERF_SAMPLE_IP));
  EXPECT_TRUE(e.ok()) << strerror(e.error());
  Ring ring(perf, e.fd(), data_pages);
  EXPECT_TRUE(ring.ok());
  return ring.ok() ? snapshot(*ring.control()) : ControlPage{};
}

// What the kernel writes into a fresh control page of a software event.
TEST_P(Mmap, FreshControlPage) {
  const ControlPage p = fresh_control_page(perf(), 4);
  EXPECT_EQ(p.version, 0u);
  EXPECT_EQ(p.compat_version, 0u);
  EXPECT_EQ(p.size, offsetof(perf_event_mmap_page, __reserved));  // 96
  // cap_bit0_is_deprecated, no rdpmc, no cap_user_time_short; the user-time bits as the clock is.
  EXPECT_EQ(p.capabilities & ~kUserTimeBits, 2u);
  if (!is_kernel()) {
    const bool tsc = support::tsc_clock_in_use();
    EXPECT_EQ(p.capabilities & kUserTimeBits, tsc ? kUserTimeBits : 0u);
  }
  expect_user_time_consistent(p);
  EXPECT_EQ(p.data_head, 0u);
  EXPECT_EQ(p.data_tail, 0u);
  EXPECT_EQ(p.data_offset, kPage);
  EXPECT_EQ(p.data_size, 4 * kPage);
  EXPECT_EQ(p.aux_head, 0u);
  EXPECT_EQ(p.aux_offset, 0u);
  EXPECT_EQ(p.aux_size, 0u);

  const ControlPage only = fresh_control_page(perf(), 0);
  EXPECT_EQ(only.data_offset, kPage);
  EXPECT_EQ(only.data_size, 0u);
}

CONFORMANCE_TARGETS(Mmap);

// Field by field, whatever the kernel reports.
TEST(MmapKernelVsUserperf, FreshControlPage) {
  CONFORMANCE_REQUIRE_KERNEL();
  const ControlPage k = fresh_control_page(Perf(Target::kKernel), 2);
  const ControlPage u = fresh_control_page(Perf(Target::kUserperf), 2);
  EXPECT_EQ(k.version, u.version);
  EXPECT_EQ(k.compat_version, u.compat_version);
  EXPECT_EQ(k.size, u.size);
  EXPECT_EQ(k.capabilities & ~kUserTimeBits, u.capabilities & ~kUserTimeBits);
  // The conversions are of two different clocks (the kernel's sched_clock, userperf's
  // CLOCK_MONOTONIC line), so they are compared only for what they claim.
  expect_user_time_consistent(k);
  expect_user_time_consistent(u);
  RecordProperty("kernel_capabilities", std::to_string(k.capabilities));
  RecordProperty("userperf_capabilities", std::to_string(u.capabilities));
  EXPECT_EQ(k.data_offset, u.data_offset);
  EXPECT_EQ(k.data_size, u.data_size);
  EXPECT_EQ(k.data_head, u.data_head);
}

}  // namespace
}  // namespace userperf::conformance
