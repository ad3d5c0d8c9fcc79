/* userperf log: an application's own records in the AUX area of a "log" event, meant as a flight
 * recorder. Open the event with type userperf_pmu_type("log") (pid 0, cpu -1), map its data ring
 * writable, store aux_offset/aux_size in the control page and map the AUX area read-only
 * (overwrite mode: the area keeps the newest records) or read-write (normal mode: a consumer
 * drains it), then enable it. Records are decoded by userperf's "log" decoder
 * (one line per record: time, thread id, text with non-printable bytes escaped). */
#ifndef USERPERF_LOG_H
#define USERPERF_LOG_H

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
