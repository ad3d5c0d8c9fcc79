// `userperf record` options -> RecordConfig: perf record's attrs for user-space sampling, and clear
// refusals of bad input.
#include <gtest/gtest.h>

#include <cstring>

#include "record/recorder/event_config.hpp"

namespace userperf::record {
namespace {

constexpr std::uint64_t kBaseSampleType = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                                          PERF_SAMPLE_PERIOD | PERF_SAMPLE_IDENTIFIER;

RecordConfig build(const RecordRequest& request, int aux_type = -1) {
  Expected<RecordConfig> config = build_record_config(request, aux_type);
  EXPECT_TRUE(config) << config.error().message;
  return config ? std::move(*config) : RecordConfig{};
}

// The message of a refused request, "" when it was accepted.
template <class T>
std::string refusal_of(const Expected<T>& result) {
  return result ? std::string() : result.error().message;
}

std::string refusal(const RecordRequest& request, int aux_type = -1) {
  const std::string message = refusal_of(build_record_config(request, aux_type));
  EXPECT_NE(message, "") << "accepted";
  return message;
}

TEST(RecordConfigBuild, DefaultsToCpuClockAt1000HzLikePerfRecord) {
  const RecordConfig config = build({});
  ASSERT_EQ(config.events.size(), 1u);
  const perf_event_attr& a = config.events[0].attr;
  EXPECT_EQ(config.events[0].name, "cpu-clock");
  EXPECT_EQ(a.type, PERF_TYPE_SOFTWARE);
  EXPECT_EQ(a.config, PERF_COUNT_SW_CPU_CLOCK);
  EXPECT_EQ(a.freq, 1u);
  EXPECT_EQ(a.sample_freq, 1000u);
  EXPECT_EQ(a.sample_type, kBaseSampleType);
  EXPECT_EQ(a.sample_id_all, 1u);
  EXPECT_EQ(a.exclude_kernel, 1u);
  EXPECT_EQ(a.exclude_hv, 1u);
  EXPECT_EQ(a.comm, 0u);
  EXPECT_EQ(a.mmap, 0u);
  EXPECT_EQ(a.size, sizeof(perf_event_attr));
  EXPECT_EQ(config.ring_pages, 128u);
  EXPECT_EQ(config.aux, AuxSource::kNone);
}

TEST(RecordConfigBuild, OffCpuAddsPerfsOffcpuTimeEventAndRefusesDwarf) {
  RecordRequest request;
  request.off_cpu = true;
  request.call_graph = CallGraph::kFramePointer;
  const RecordConfig config = build(request);
  ASSERT_EQ(config.events.size(), 2u);
  EXPECT_EQ(config.events[0].name, "cpu-clock");
  const perf_event_attr& a = config.events[1].attr;
  EXPECT_EQ(config.events[1].name, "offcpu-time");
  EXPECT_EQ(a.type, PERF_TYPE_SOFTWARE);
  EXPECT_EQ(a.config, PERF_COUNT_SW_BPF_OUTPUT);
  EXPECT_EQ(a.sample_period, 1u);
  EXPECT_EQ(a.freq, 0u);
  // The other events' sample_type: the sample_id trailer is alike in every attr.
  EXPECT_EQ(a.sample_type, config.events[0].attr.sample_type);
  EXPECT_NE(a.sample_type & PERF_SAMPLE_CALLCHAIN, 0u);

  request.call_graph = CallGraph::kDwarf;
  const Expected<RecordConfig> dwarf = build_record_config(request, -1);
  ASSERT_FALSE(dwarf);
  EXPECT_NE(dwarf.error().message.find("--off-cpu"), std::string::npos);
}

TEST(RecordConfigBuild, PeriodFrameAndDwarfCallGraphs) {
  RecordRequest request;
  request.events = {"task-clock"};
  request.period = 250000;
  request.call_graph = CallGraph::kFramePointer;
  RecordConfig config = build(request);
  EXPECT_EQ(config.events[0].attr.config, PERF_COUNT_SW_TASK_CLOCK);
  EXPECT_EQ(config.events[0].attr.freq, 0u);
  EXPECT_EQ(config.events[0].attr.sample_period, 250000u);
  EXPECT_EQ(config.events[0].attr.sample_type, kBaseSampleType | PERF_SAMPLE_CALLCHAIN);

  ASSERT_EQ(refusal_of(parse_call_graph("dwarf,1000", request)), "");
  EXPECT_EQ(request.stack_size, 1000u);
  ASSERT_EQ(refusal_of(parse_call_graph("dwarf,1001", request)), "");
  EXPECT_EQ(request.stack_size, 1008u) << "rounded up to 8 as perf does";
  config = build(request);
  const perf_event_attr& a = config.events[0].attr;
  EXPECT_EQ(a.sample_type, kBaseSampleType | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |
                               PERF_SAMPLE_STACK_USER);
  EXPECT_EQ(a.sample_regs_user, 0xff0fffu);
  EXPECT_EQ(a.sample_stack_user, 1008u);
  EXPECT_EQ(a.exclude_callchain_user, 1u);

  EXPECT_NE(refusal_of(parse_call_graph("lbr", request)).find("lbr"), std::string::npos);
  EXPECT_FALSE(parse_call_graph("dwarf,0", request));
  EXPECT_FALSE(parse_call_graph("dwarf,70000", request));
  EXPECT_FALSE(parse_call_graph("dwarf,12x", request));
}

TEST(RecordConfigBuild, TracepointsGetIdsFromTheirIndexAndRaw) {
  RecordRequest request;
  request.events = {"cpu-clock", "app:request", "app:reply"};
  const RecordConfig config = build(request);
  ASSERT_EQ(config.events.size(), 3u);
  for (int i : {1, 2}) {
    const perf_event_attr& a = config.events[i].attr;
    EXPECT_EQ(a.type, PERF_TYPE_TRACEPOINT);
    EXPECT_EQ(a.config, kTracepointIdBase + static_cast<std::uint64_t>(i - 1));
    EXPECT_EQ(a.sample_period, 1u);
    EXPECT_EQ(a.freq, 0u);
    EXPECT_EQ(a.sample_type, kBaseSampleType | PERF_SAMPLE_RAW);
  }
  EXPECT_EQ(pmu_name_of(config.events[1]), "tracepoint");
  EXPECT_EQ(pmu_name_of(config.events[0]), "software");
}

TEST(RecordConfigBuild, AuxLeaderAndSamplersCarryingItsBytes) {
  RecordRequest request;
  request.aux = AuxSource::kCalltrace;
  request.events = {"task-clock"};
  const RecordConfig config = build(request, 42);
  ASSERT_EQ(config.events.size(), 2u);
  EXPECT_EQ(config.aux, AuxSource::kCalltrace);
  EXPECT_EQ(config.aux_pages, 16u);
  const EventConfig& leader = config.events[0];
  EXPECT_EQ(leader.attr.type, 42u);
  EXPECT_EQ(leader.name, "calltrace");
  EXPECT_EQ(leader.group_leader, -1);
  EXPECT_TRUE(leader.attr.sample_type & PERF_SAMPLE_IP) << "perf script needs IP on every attr";
  EXPECT_EQ(leader.attr.sample_type & PERF_SAMPLE_AUX, 0u);
  const EventConfig& sampler = config.events[1];
  EXPECT_EQ(sampler.group_leader, 0);
  EXPECT_TRUE(sampler.attr.sample_type & PERF_SAMPLE_AUX);
  EXPECT_EQ(sampler.attr.aux_sample_size, 4096u);
  EXPECT_EQ(pmu_name_of(leader), "calltrace");

  request.aux_sample_size = 512;
  EXPECT_EQ(build(request, 42).events[1].attr.aux_sample_size, 512u);
  EXPECT_NE(refusal(request, -1).find("PMU"), std::string::npos);
}

TEST(RecordConfigBuild, RefusesBadInputWithTheReason) {
  RecordRequest request;
  request.events = {"cycles"};
  EXPECT_NE(refusal(request).find("unknown event 'cycles'"), std::string::npos);
  request.events = {"app:"};
  EXPECT_NE(refusal(request).find("unknown event"), std::string::npos);
  request.events = {"a b:c"};
  EXPECT_NE(refusal(request).find("unknown event"), std::string::npos);
  request.events = {};
  request.frequency = 100;
  request.period = 100;
  EXPECT_NE(refusal(request).find("-F and -c"), std::string::npos);
  request = {};
  for (int i = 0; i < 17; ++i) request.events.push_back("app:event" + std::to_string(i));
  EXPECT_NE(refusal(request).find("at most"), std::string::npos);
  request.events = {"cpu-clock", "app:request", "cpu-clock"};
  EXPECT_NE(refusal(request).find("named twice"), std::string::npos);
  request.events = {"app:9lives"};
  EXPECT_NE(refusal(request).find("unknown event"), std::string::npos);

  EXPECT_NE(refusal_of(parse_mmap_pages("3", request)).find("power of two"), std::string::npos);
  EXPECT_FALSE(parse_mmap_pages("x", request));
  EXPECT_FALSE(parse_mmap_pages("8,3", request));
  ASSERT_EQ(refusal_of(parse_mmap_pages("8,32", request)), "");
  EXPECT_EQ(request.ring_pages, 8u);
  EXPECT_EQ(request.aux_pages, 32u);
}

TEST(RecordConfigBuild, TheConfigSurvivesTheEnvironment) {
  RecordRequest request;
  request.aux = AuxSource::kLog;
  request.events = {"cpu-clock", "app:tick"};
  request.call_graph = CallGraph::kDwarf;
  const RecordConfig config = build(request, 17);
  const Expected<RecordConfig> parsed = RecordConfig::decode(config.encode());
  ASSERT_TRUE(parsed) << parsed.error().message;
  const RecordConfig& decoded = *parsed;
  ASSERT_EQ(decoded.events.size(), config.events.size());
  for (std::size_t i = 0; i < config.events.size(); ++i) {
    EXPECT_EQ(std::memcmp(&decoded.events[i].attr, &config.events[i].attr, sizeof(perf_event_attr)),
              0);
    EXPECT_EQ(decoded.events[i].name, config.events[i].name);
    EXPECT_EQ(decoded.events[i].group_leader, config.events[i].group_leader);
  }
  EXPECT_EQ(decoded.aux, AuxSource::kLog);
  EXPECT_EQ(decoded.aux_pages, config.aux_pages);
}

}  // namespace
}  // namespace userperf::record
