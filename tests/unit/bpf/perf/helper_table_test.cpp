// The verifier's prototype table and the runtime's function table name the same helpers: a
// program the verifier accepts never calls a helper the interpreter lacks, and the runtime
// offers nothing the verifier would not check.
#include <gtest/gtest.h>

#include "bpf/perf/perf_helpers.hpp"
#include "bpf/verifier/helper_protos.hpp"

namespace userperf::bpf {
namespace {

TEST(HelperTable, EveryPrototypeHasAFunctionAndEveryFunctionAPrototype) {
  const std::vector<HelperFn> table = perf_event_helper_table();
  int allowed = 0;
  for (std::int32_t id = 0; id < 256; ++id) {
    const HelperProto* proto = perf_event_helper_proto(id);
    const bool has_function = static_cast<std::size_t>(id) < table.size() && table[id] != nullptr;
    EXPECT_EQ(proto != nullptr, has_function)
        << "helper " << id << (proto ? std::string(" ") + proto->name : "");
    allowed += proto != nullptr;
  }
  EXPECT_LE(table.size(), 256u);
  EXPECT_GE(allowed, 25);
}

}  // namespace
}  // namespace userperf::bpf
