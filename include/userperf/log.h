/* userperf log: an application's own records in the AUX area of a "log" event, meant as a flight
 * recorder. Open the event with type userperf_pmu_type("log") (pid 0, cpu -1), map its data ring
 * writable, store aux_offset/aux_size in the control page and map the AUX area read-only
 * (overwrite mode: the area keeps the newest records) or read-write (normal mode: a consumer
 * drains it), then enable it. Records are decoded by userperf's "log" decoder
 * (one line per record: time, thread id, text with non-printable bytes escaped).
 *
 * Under `userperf record --aux log` the preloaded agent opens a log event on every thread of the
 * program (the group leader of its samplers: each sample carries the thread's newest log bytes);
 * the program writes to it with userperf_log_thread(), which needs no userperf library. */
#ifndef USERPERF_LOG_H
#define USERPERF_LOG_H

#include <errno.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Appends one record (the calling thread's id, the event's clock, `len` bytes) to the log event
 * `fd`, from any thread; async-signal-safe. 0, or -1 with errno EBADF (fd is no log event),
 * EMSGSIZE (len > 65535 or larger than the area), ENOTCONN (the event is disabled or has no AUX
 * area), ENOSPC (normal mode: the area is full and the event now disabled), EAGAIN (the area is
 * busy: a signal handler interrupted a write on this thread, or a writer stalled). */
int userperf_log_write(int fd, const void* data, size_t len);

/* Appends one record to the calling thread's own log: the log event opened on exactly this thread
 * (pid = its thread id; under `userperf record --aux log`, the agent's). Async-signal-safe. 0, or
 * -1 with errno ENOTCONN (no log event on this thread) or those of userperf_log_write. Declared
 * weak: defined by the userperf library and by the agent of `userperf record`, so a program that
 * links neither calls it through userperf_log_thread(). */
int userperf_log_thread_write(const void* data, size_t len) __attribute__((weak));

/* userperf_log_thread_write when the program has it (linked with userperf, or run by `userperf
 * record`), else -1 with errno ENOTCONN: one load and a branch. */
static inline int userperf_log_thread(const void* data, size_t len) {
  if (!userperf_log_thread_write) {
    errno = ENOTCONN;
    return -1;
  }
  return userperf_log_thread_write(data, len);
}

/* printf into a record (at most 1023 bytes of text); not async-signal-safe (vsnprintf). */
int userperf_log_printf(int fd, const char* format, ...) __attribute__((format(printf, 2, 3)));

/* Writes the newest bytes of the log (the whole area's worth, oldest first, in the log format) to
 * out_fd, with the AUX snapshot protocol (the event is disabled while they are copied, then
 * re-enabled). 0, or -1 with errno EBADF (no log event), ENODATA (no AUX area), ENOMEM, or
 * write(2)'s errno. */
int userperf_log_dump(int fd, int out_fd);

/* On SIGSEGV, SIGBUS, SIGILL, SIGFPE or SIGABRT, write the newest bytes of the log `fd` to out_fd
 * (write(2) only: no locks, no allocation), then restore the signal's previous disposition and
 * raise it again. Several logs may be registered; out_fd -1 unregisters one. 0, or -1 with errno
 * EBADF (no log event) or sigaction's errno. */
int userperf_log_dump_on_crash(int fd, int out_fd);

#ifdef __cplusplus
}
#endif

#endif /* USERPERF_LOG_H */
