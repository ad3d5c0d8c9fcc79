#include "perfdata/record_names.hpp"

#include <iterator>

#include "perfdata/format.hpp"

namespace userperf::perfdata {

const char* known_record_type_name(std::uint32_t type) {
  static constexpr const char* kKernel[] = {
      nullptr,
      "PERF_RECORD_MMAP",
      "PERF_RECORD_LOST",
      "PERF_RECORD_COMM",
      "PERF_RECORD_EXIT",
      "PERF_RECORD_THROTTLE",
      "PERF_RECORD_UNTHROTTLE",
      "PERF_RECORD_FORK",
      "PERF_RECORD_READ",
      "PERF_RECORD_SAMPLE",
      "PERF_RECORD_MMAP2",
      "PERF_RECORD_AUX",
      "PERF_RECORD_ITRACE_START",
      "PERF_RECORD_LOST_SAMPLES",
      "PERF_RECORD_SWITCH",
      "PERF_RECORD_SWITCH_CPU_WIDE",
      "PERF_RECORD_NAMESPACES",
      "PERF_RECORD_KSYMBOL",
      "PERF_RECORD_BPF_EVENT",
      "PERF_RECORD_CGROUP",
      "PERF_RECORD_TEXT_POKE",
      "PERF_RECORD_AUX_OUTPUT_HW_ID",
  };
  if (type < std::size(kKernel)) return kKernel[type];
  switch (type) {
    case kRecordHeaderAttr:
      return "PERF_RECORD_HEADER_ATTR";
    case kRecordHeaderTracingData:
      return "PERF_RECORD_HEADER_TRACING_DATA";
    case kRecordFinishedRound:
      return "PERF_RECORD_FINISHED_ROUND";
    case kRecordAuxtraceInfo:
      return "PERF_RECORD_AUXTRACE_INFO";
    case kRecordAuxtrace:
      return "PERF_RECORD_AUXTRACE";
    default:
      return nullptr;
  }
}

std::string record_type_name(std::uint32_t type) {
  const char* name = known_record_type_name(type);
  return name != nullptr ? name : "unknown type " + std::to_string(type);
}

}  // namespace userperf::perfdata
