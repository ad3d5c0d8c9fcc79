// Engine::set_id_base: a recorder gives each process image a range of event ids.
#include <gtest/gtest.h>

#include "core/engine.hpp"
#include "support/pmu/test_pmu.hpp"

namespace userperf {
namespace {

std::uint64_t open_and_get_id(core::Engine& engine, int type) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = static_cast<std::uint32_t>(type);
  attr.sample_period = 1;
  const int fd = engine.open(&attr, 0, -1, -1, 0);
  EXPECT_GE(fd, 0);
  std::uint64_t id = 0;
  EXPECT_EQ(engine.ioctl(fd, PERF_EVENT_IOC_ID, reinterpret_cast<unsigned long>(&id)), 0);
  EXPECT_EQ(engine.close(fd), 0);
  return id;
}

TEST(EngineIdBase, LaterEventsGetIdsAboveTheBase) {
  core::Engine engine;
  testing::TestPmu pmu;
  const int type = engine.register_pmu(pmu);
  const std::uint64_t base = std::uint64_t{5} << 32;
  engine.set_id_base(base);
  const std::uint64_t first = open_and_get_id(engine, type);
  const std::uint64_t second = open_and_get_id(engine, type);
  EXPECT_EQ(first, base + 1);
  EXPECT_EQ(second, base + 2);
}

}  // namespace
}  // namespace userperf
