#include "support/pmu/test_aux_pmu.hpp"

namespace userperf::testing {

int TestAuxPmu::event_init(core::Event& event) {
  (void)event;
  return 0;
}

int TestAuxPmu::event_bind(core::Event& event) {
  attach(event, std::make_unique<Source>(event, engine_.grace_period()));
  return 0;
}

core::AuxStream::Append TestAuxPmu::write(core::Event& event, const void* bytes, std::size_t len) {
  return source_of(event)->stream.append(bytes, len);
}

void TestAuxPmu::flush(core::Event& event) {
  source_of(event)->stream.flush();
}

}  // namespace userperf::testing
