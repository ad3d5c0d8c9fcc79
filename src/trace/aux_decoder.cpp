#include "trace/aux_decoder.hpp"

#include "trace/calltrace_format.hpp"
#include "trace/log_format.hpp"
#include "trace/synthetic_format.hpp"

namespace userperf::trace {

std::unique_ptr<AuxDecoder> make_decoder(std::string_view pmu_name) {
  if (pmu_name == "synthetic") return make_synthetic_decoder();
  if (pmu_name == "calltrace") return make_calltrace_decoder();
  if (pmu_name == "log") return make_log_decoder();
  return nullptr;
}

}  // namespace userperf::trace
