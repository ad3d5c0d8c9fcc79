/* A C program samples itself through userperf's syscall-mirror API: the same perf_event_attr,
 * ioctl and mmap calls, and the same ring protocol, as with the kernel's perf_event_open.
 * Prints the number of samples and the CPU time their PERIOD fields add up to. */
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <userperf/userperf.h>

static double thread_cpu_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(void) {
  struct perf_event_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.sample_period = 1000000; /* 1 ms of CPU time */
  attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD;
  attr.disabled = 1;
  attr.exclude_kernel = 1;

  int fd = userperf_perf_event_open(&attr, 0, -1, -1, 0);
  if (fd < 0) {
    perror("userperf_perf_event_open");
    return 1;
  }
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  const size_t length = (1 + 8) * page; /* control page + 8 data pages */
  void* base = userperf_mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    perror("userperf_mmap");
    return 1;
  }
  struct perf_event_mmap_page* control = base;

  userperf_ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
  const double start = thread_cpu_ms();
  volatile uint64_t sink = 0;
  /* Mostly user time: reading the thread's CPU clock is a system call, and with exclude_kernel a
   * period that ends inside one is not sampled (as the kernel's own hrtimer would not). */
  while (thread_cpu_ms() - start < 100) {
    for (int i = 0; i < 100000; ++i) sink = sink * 7 + 1;
  }
  userperf_ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
  const double used = thread_cpu_ms() - start;

  /* The kernel's consumer protocol: load-acquire data_head, read, store-release data_tail. The
   * records are 24 bytes (header, ip, period) and 24 does not divide the data size, so a record
   * may wrap: copy it out byte by byte. */
  const uint8_t* data = (const uint8_t*)base + control->data_offset;
  const uint64_t size = control->data_size;
  const uint64_t head = __atomic_load_n(&control->data_head, __ATOMIC_ACQUIRE);
  uint64_t tail = control->data_tail, samples = 0, period_ns = 0;
  while (tail < head) {
    uint8_t record[24];
    struct perf_event_header header;
    for (size_t i = 0; i < sizeof header; ++i) ((uint8_t*)&header)[i] = data[(tail + i) % size];
    if (header.size < sizeof header || header.size > head - tail) break;
    if (header.type == PERF_RECORD_SAMPLE && header.size == sizeof record) {
      for (size_t i = 0; i < sizeof record; ++i) record[i] = data[(tail + i) % size];
      uint64_t period;
      memcpy(&period, record + 16, sizeof period);
      ++samples;
      period_ns += period;
    }
    tail += header.size;
  }
  __atomic_store_n(&control->data_tail, tail, __ATOMIC_RELEASE);

  printf("%llu samples covering %.1f ms of %.1f ms CPU time\n", (unsigned long long)samples,
         period_ns / 1e6, used);
  userperf_munmap(base, length);
  userperf_close(fd);
  return samples > 0 ? 0 : 1;
}
