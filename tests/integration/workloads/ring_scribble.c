/* Threads that overwrite their own ring (the agent's per-thread data ring, a "userperf-ring" memfd
 * mapped in this process) while other threads keep working (record_test.sh ring-scribble).
 * Each scribbler burns CPU until it is sampled, finds its ring (the mapping whose records are
 * samples of its own tid), prints "scribbler KIND TID", then damages it one way:
 * - tail: data_tail rewound to 0 (the records already read look unread again),
 * - data: random bytes over the data area,
 * - head: data_head set to random unaligned values, far ahead, for 20 ms,
 * - control: random bytes over the whole control page,
 * and burns CPU on. Meanwhile WORKERS threads burn SECONDS of CPU each in worker_burn and print
 * "worker TID CPU_MS", all at the same time as the scribblers. Exits 0, or 2 when a scribbler
 * found no ring of its own.
 * Usage: workload_ring_scribble [SECONDS [WORKERS]] */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double g_seconds = 1.0;

static uint64_t cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static uint64_t burn(double seconds) {
  volatile uint64_t sink = 0;
  const uint64_t end = cpu_ns() + (uint64_t)(seconds * 1e9);
  while (cpu_ns() < end) {
    for (int i = 0; i < (1 << 16); ++i) sink = sink * 33 + (uint64_t)i;
  }
  return sink;
}

__attribute__((noinline)) static uint64_t worker_burn(double seconds) {
  return burn(seconds);
}
__attribute__((noinline)) static uint64_t scribbler_burn(double seconds) {
  return burn(seconds);
}

/* The sample layout of `userperf record`'s cpu-clock: IDENTIFIER, IP, TID (pid, tid), TIME,
 * PERIOD. Whether the ring at `base` holds a sample of `tid` among its first records. */
static int ring_has_sample_of(const uint8_t* base, pid_t tid) {
  const struct perf_event_mmap_page* control = (const void*)base;
  const uint64_t size = control->data_size;
  const uint64_t offset = control->data_offset;
  if (size == 0 || offset == 0 || (size & (size - 1)) != 0) return 0;
  const uint64_t head = __atomic_load_n(&control->data_head, __ATOMIC_ACQUIRE);
  for (uint64_t pos = 0; pos + sizeof(struct perf_event_header) <= head && pos < size;) {
    struct perf_event_header header;
    memcpy(&header, base + offset + pos, sizeof header);
    if (header.size < 8 || pos + header.size > size) return 0;
    if (header.type == PERF_RECORD_SAMPLE && header.size >= 32) {
      uint32_t sample_tid;
      memcpy(&sample_tid, base + offset + pos + 8 + 8 + 8 + 4, sizeof sample_tid);
      if ((pid_t)sample_tid == tid) return 1;
    }
    pos += header.size;
  }
  return 0;
}

/* The start and length of this thread's ring, or 0. */
static uint8_t* find_own_ring(pid_t tid, size_t* length) {
  FILE* maps = fopen("/proc/self/maps", "r");
  if (maps == NULL) return NULL;
  char line[512];
  uint8_t* found = NULL;
  while (found == NULL && fgets(line, sizeof line, maps) != NULL) {
    if (strstr(line, "/memfd:userperf-ring") == NULL || strstr(line, "rw-s") == NULL) continue;
    unsigned long start, end;
    if (sscanf(line, "%lx-%lx", &start, &end) != 2) continue;
    if (ring_has_sample_of((const uint8_t*)start, tid)) {
      found = (uint8_t*)start;
      *length = end - start;
    }
  }
  fclose(maps);
  return found;
}

static uint64_t random_word(void) {
  return ((uint64_t)random() << 33) ^ ((uint64_t)random() << 11) ^ (uint64_t)random();
}

static void scribble(const char* kind, uint8_t* base, size_t length) {
  struct perf_event_mmap_page* control = (void*)base;
  const long page = sysconf(_SC_PAGESIZE);
  if (strcmp(kind, "tail") == 0) {
    __atomic_store_n(&control->data_tail, 0, __ATOMIC_RELEASE);
  } else if (strcmp(kind, "data") == 0) {
    for (size_t i = (size_t)page; i + 8 <= length; i += 8) {
      const uint64_t w = random_word();
      memcpy(base + i, &w, sizeof w);
    }
  } else if (strcmp(kind, "head") == 0) {
    /* The thread's own samples publish its head again: store garbage over it for 20 ms, so that
     * drains (every 15 ms) find it. */
    const uint64_t end = cpu_ns() + 20000000u;
    while (cpu_ns() < end) {
      __atomic_store_n(&control->data_head, random_word() | 0x4000000000000003ull,
                       __ATOMIC_RELEASE);
    }
  } else {
    for (long i = 0; i + 8 <= page; i += 8) {
      const uint64_t w = random_word();
      memcpy(base + i, &w, sizeof w);
    }
  }
}

static int g_failed;

static void* scribbler(void* arg) {
  const char* kind = arg;
  const pid_t tid = (pid_t)syscall(SYS_gettid);
  char name[16];
  snprintf(name, sizeof name, "scrib-%s", kind);
  pthread_setname_np(pthread_self(), name);
  uint8_t* ring = NULL;
  size_t length = 0;
  for (int i = 0; i < 100 && ring == NULL; ++i) {
    scribbler_burn(0.01);
    ring = find_own_ring(tid, &length);
  }
  if (ring == NULL) {
    fprintf(stderr, "scribbler %s %d: no ring of its own found\n", kind, tid);
    g_failed = 1;
    return NULL;
  }
  /* Let the recorder drain what was written so far (every 15 ms), then damage the ring, and
   * again while the thread writes on. */
  scribbler_burn(0.05);
  printf("scribbler %s %d\n", kind, tid);
  fflush(stdout);
  for (int round = 0; round < 5; ++round) {
    scribble(kind, ring, length);
    scribbler_burn(0.03);
  }
  return NULL;
}

static void* worker(void* arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "worker");
  const uint64_t start = cpu_ns();
  worker_burn(g_seconds);
  printf("worker %ld %llu\n", (long)syscall(SYS_gettid),
         (unsigned long long)((cpu_ns() - start) / 1000000));
  fflush(stdout);
  return NULL;
}

int main(int argc, char** argv) {
  if (argc > 1) g_seconds = atof(argv[1]);
  const int workers = argc > 2 ? atoi(argv[2]) : 3;
  srandom((unsigned)getpid());
  static const char* const kinds[] = {"tail", "data", "head", "control"};
  enum { kKinds = sizeof kinds / sizeof kinds[0] };
  pthread_t threads[64 + kKinds];
  const int n = workers < 64 ? workers : 64;
  for (int i = 0; i < n; ++i) pthread_create(&threads[i], NULL, worker, NULL);
  for (int k = 0; k < kKinds; ++k)
    pthread_create(&threads[n + k], NULL, scribbler, (void*)kinds[k]);
  for (int i = 0; i < n + kKinds; ++i) pthread_join(threads[i], NULL);
  return g_failed ? 2 : 0;
}
