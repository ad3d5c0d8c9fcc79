#include "pmu/test_aux_pmu.hpp"

namespace userperf::pmu {

core::AuxStream& TestAuxPmu::stream(core::Event& event) {
  return *reinterpret_cast<core::AuxStream*>(event.pmu_private);
}

int TestAuxPmu::event_init(core::Event& event) {
  (void)event;
  return 0;
}

int TestAuxPmu::event_bind(core::Event& event) {
  event.pmu_private =
      reinterpret_cast<std::uint64_t>(new core::AuxStream(event, engine_.grace_period()));
  return 0;
}

int TestAuxPmu::add(core::Event& event) {
  stream(event).start();
  return 0;
}

void TestAuxPmu::del(core::Event& event) {
  stream(event).stop();
}

void TestAuxPmu::free_aux(core::Event& event) {
  stream(event).release_area();
}

void TestAuxPmu::destroy(core::Event& event) {
  delete &stream(event);
  event.pmu_private = 0;
}

core::AuxStream::Append TestAuxPmu::write(core::Event& event, const void* bytes, std::size_t len) {
  return stream(event).append(bytes, len);
}

void TestAuxPmu::flush(core::Event& event) {
  stream(event).flush();
}

}  // namespace userperf::pmu
