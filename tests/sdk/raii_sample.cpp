// The README's C++ example built against an installed userperf (tests/sdk): userperf.hpp's Event
// and Mapping sample 50 ms of this thread's CPU time. Exits 1 unless the ring holds samples and
// the count read back covers the time burnt.
#include <linux/perf_event.h>
#include <time.h>

#include <cstdint>
#include <cstdio>
#include <system_error>
#include <userperf/userperf.hpp>

namespace {

double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

}  // namespace

int main() try {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.sample_period = 1'000'000;  // 1 ms of this thread's CPU time
  attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD;
  attr.disabled = 1;

  userperf::Event event(attr);
  userperf::Mapping ring(event, 8);
  event.enable();
  const double start = thread_cpu_ms();
  volatile std::uint64_t sink = 0;
  while (thread_cpu_ms() - start < 50) {
    for (int i = 0; i < 100000; ++i) sink = sink * 7 + 1;
  }
  event.disable();

  std::uint64_t count = 0;
  event.read({&count, 1});
  const std::uint64_t head = __atomic_load_n(&ring.control()->data_head, __ATOMIC_ACQUIRE);
  std::printf("task-clock %.1f ms, %llu ring bytes\n", static_cast<double>(count) / 1e6,
              static_cast<unsigned long long>(head));
  return count >= 40'000'000 && head > 0 ? 0 : 1;
} catch (const std::system_error& e) {
  std::fprintf(stderr, "raii_sample: %s\n", e.what());
  return 1;
}
