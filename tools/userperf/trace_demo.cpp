// `userperf trace-demo -o FILE`: AUX sampling end to end. A calltrace event (the group leader,
// with an overwrite-mode AUX area: a flight recorder of this thread's calls) and a task-clock event
// in its group whose samples carry the newest calltrace bytes (PERF_SAMPLE_AUX). The workload is
// compiled with -finstrument-functions; the rings are drained into a perf.data file that perf
// report / perf script read and that `userperf script -i FILE` decodes.
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "commands.hpp"
#include "perfdata/writer.hpp"
#include "record/recorder/process_state.hpp"
#include "ring/reader.hpp"
#include "trace_demo_workload.hpp"
#include "userperf/userperf.h"

namespace userperf::cli {
namespace {

struct TraceDemoOptions {
  std::string output = "perf.data";
  unsigned ms = 200;
  std::uint32_t aux_sample_size = 2048;
  std::size_t aux_pages = 16;
  std::uint64_t period_us = 1000;
};

// One event with its data ring mapped (and, for the leader, its AUX area).
struct MappedEvent {
  int fd = -1;
  std::uint64_t id = 0;
  void* ring = MAP_FAILED;
  std::size_t ring_length = 0;
  void* aux = MAP_FAILED;
  std::size_t aux_length = 0;

  ~MappedEvent() {
    if (aux != MAP_FAILED) userperf_munmap(aux, aux_length);
    if (ring != MAP_FAILED) userperf_munmap(ring, ring_length);
    if (fd >= 0) userperf_close(fd);
  }
};

bool fail(const char* what) {
  std::fprintf(stderr, "trace-demo: %s: %s\n", what, std::strerror(errno));
  return false;
}

bool open_event(perf_event_attr& attr, int group_fd, std::size_t data_pages, MappedEvent& out) {
  out.fd = userperf_perf_event_open(&attr, 0, -1, group_fd, 0);
  if (out.fd < 0) return fail("perf_event_open");
  if (userperf_ioctl(out.fd, PERF_EVENT_IOC_ID, reinterpret_cast<unsigned long>(&out.id)) != 0) {
    return fail("PERF_EVENT_IOC_ID");
  }
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  out.ring_length = (1 + data_pages) * page;
  out.ring = userperf_mmap(nullptr, out.ring_length, PROT_READ | PROT_WRITE, MAP_SHARED, out.fd, 0);
  if (out.ring == MAP_FAILED) return fail("mmap of the data ring");
  return true;
}

bool map_aux(MappedEvent& event, std::size_t data_pages, std::size_t aux_pages) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  auto* control = static_cast<perf_event_mmap_page*>(event.ring);
  control->aux_offset = (1 + data_pages) * page;
  control->aux_size = aux_pages * page;
  event.aux_length = aux_pages * page;
  // Read-only: overwrite mode, the flight recorder.
  event.aux = userperf_mmap(nullptr, event.aux_length, PROT_READ, MAP_SHARED, event.fd,
                            static_cast<off_t>(control->aux_offset));
  if (event.aux == MAP_FAILED) return fail("mmap of the AUX area");
  return true;
}

struct DrainCounts {
  std::uint64_t records = 0;
  std::uint64_t samples = 0;
  std::uint64_t aux_records = 0;
  std::uint64_t lost = 0;
};

// Appends every record of the ring to the file, as the ring holds it.
bool drain(const MappedEvent& event, perfdata::Writer& writer, DrainCounts& counts) {
  ring::RingView view;
  if (ring::make_ring_view(event.ring, event.ring_length, view) != ring::ReadStatus::kOk) {
    std::fprintf(stderr, "trace-demo: the control page does not describe a data area\n");
    return false;
  }
  ring::Reader reader(view);
  const ring::ReadStatus status = ring::drain(reader, [&](const ring::Record& r) {
    if (!writer.append(r.bytes)) return false;
    ++counts.records;
    if (r.header.type == PERF_RECORD_SAMPLE) ++counts.samples;
    if (r.header.type == PERF_RECORD_AUX) ++counts.aux_records;
    return true;
  });
  counts.lost += reader.lost();
  if (writer.failed()) return false;
  if (status != ring::ReadStatus::kEmpty) {
    std::fprintf(stderr, "trace-demo: reading a ring failed: %s\n", ring::to_string(status));
    return false;
  }
  return true;
}

int run_trace_demo(const TraceDemoOptions& options) {
  const int calltrace_type = userperf_pmu_type("calltrace");
  if (calltrace_type < 0) {
    fail("no calltrace PMU");
    return 1;
  }
  // IDENTIFIER on both events: perf finds the id at the same place in every record.
  const std::uint64_t id_fields = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;

  perf_event_attr leader_attr{};
  leader_attr.size = sizeof leader_attr;
  leader_attr.type = static_cast<std::uint32_t>(calltrace_type);
  // IP although the calltrace event writes no samples: perf script picks its output fields per
  // attr and refuses an attr that has neither IP nor ADDR.
  leader_attr.sample_type = id_fields | PERF_SAMPLE_IP;
  leader_attr.sample_id_all = 1;
  leader_attr.disabled = 1;
  leader_attr.exclude_kernel = 1;

  perf_event_attr sampler_attr{};
  sampler_attr.size = sizeof sampler_attr;
  sampler_attr.type = PERF_TYPE_SOFTWARE;
  sampler_attr.config = PERF_COUNT_SW_TASK_CLOCK;
  sampler_attr.sample_period = options.period_us * 1000;
  sampler_attr.sample_type =
      id_fields | PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_AUX;
  sampler_attr.aux_sample_size = options.aux_sample_size;
  sampler_attr.sample_id_all = 1;
  sampler_attr.exclude_kernel = 1;

  constexpr std::size_t kDataPages = 64;
  MappedEvent leader;
  MappedEvent sampler;
  if (!open_event(leader_attr, -1, kDataPages, leader) ||
      !map_aux(leader, kDataPages, options.aux_pages) ||
      !open_event(sampler_attr, leader.fd, kDataPages, sampler)) {
    return 1;
  }

  auto created = perfdata::Writer::create(options.output);
  if (!created) {
    std::fprintf(stderr, "trace-demo: %s\n", created.error().message.c_str());
    return 1;
  }
  std::unique_ptr<perfdata::Writer> writer = std::move(*created);
  const std::uint64_t leader_ids[] = {leader.id};
  const std::uint64_t sampler_ids[] = {sampler.id};
  if (writer->add_attr(leader_attr, leader_ids) < 0 ||
      writer->add_attr(sampler_attr, sampler_ids) < 0 ||
      !record::synthesize_process(getpid(), sampler_attr, sampler.id, *writer)) {
    std::fprintf(stderr, "trace-demo: writing %s: %s\n", options.output.c_str(),
                 writer->error().message.c_str());
    return 1;
  }
  // EVENT_DESC names: perf shows "calltrace" rather than "unknown attr type: N".
  writer->set_event_name(0, "calltrace");
  writer->set_event_name(1, "task-clock");
  auto& features = writer->features();
  features = perfdata::Features::of_this_host();
  features.pmu_mappings = std::vector<perfdata::PmuMapping>{
      {PERF_TYPE_SOFTWARE, "software"}, {static_cast<std::uint32_t>(calltrace_type), "calltrace"}};

  DrainCounts counts;
  if (userperf_ioctl(leader.fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP) != 0) {
    fail("enable");
    return 1;
  }
  for (unsigned done = 0; done < options.ms; done += 20) {
    trace_demo_run(20);
    if (!drain(leader, *writer, counts) || !drain(sampler, *writer, counts) ||
        !writer->append_finished_round()) {
      return 1;
    }
  }
  userperf_ioctl(leader.fd, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
  if (!drain(leader, *writer, counts) || !drain(sampler, *writer, counts) || !writer->finish()) {
    std::fprintf(stderr, "trace-demo: writing %s: %s\n", options.output.c_str(),
                 writer->error().message.c_str());
    return 1;
  }
  std::printf(
      "[ trace-demo: %llu samples with up to %u bytes of calltrace each, %llu AUX records, lost "
      "%llu ]\n[ trace-demo: wrote %s (%.3f MB) ]\n",
      static_cast<unsigned long long>(counts.samples), options.aux_sample_size,
      static_cast<unsigned long long>(counts.aux_records),
      static_cast<unsigned long long>(counts.lost), options.output.c_str(),
      static_cast<double>(writer->data_size()) / 1e6);
  if (counts.samples == 0) {
    std::fprintf(stderr, "trace-demo: no samples were written\n");
    return 1;
  }
  return 0;
}

}  // namespace

void add_trace_demo_command(CLI::App& app, int& exit_code) {
  static TraceDemoOptions options;
  CLI::App* cmd = app.add_subcommand(
      "trace-demo",
      "trace this thread's calls into an AUX flight recorder and write task-clock samples that "
      "carry the newest calls (PERF_SAMPLE_AUX) to a perf.data file");
  cmd->add_option("-o,--output", options.output, "output file")->capture_default_str();
  cmd->add_option("--ms", options.ms, "CPU milliseconds of workload")
      ->check(CLI::Range(20u, 60'000u));
  cmd->add_option("--aux-sample", options.aux_sample_size, "calltrace bytes per sample")
      ->check(CLI::Range(0u, 65'000u));
  cmd->add_option("--aux-pages", options.aux_pages, "pages of the AUX area (a power of two)");
  cmd->callback([&exit_code] { exit_code = run_trace_demo(options); });
}

}  // namespace userperf::cli
