/* userperf: the Linux perf_event output subsystem in user space.
 *
 * A C API that mirrors the perf_event syscalls. Each call takes the same arguments as the kernel's
 * and fails the same way: -1 (or MAP_FAILED) with errno set to the kernel's errno for that case.
 * Structures and constants are the kernel's own, from <linux/perf_event.h>.
 *
 * Descriptors returned by userperf_perf_event_open() are userperf handles, not kernel file
 * descriptors: pass them only to userperf_* calls. userperf_event_wakeup_fd() gives a real file
 * descriptor for poll()/epoll integration, and userperf_event_ring_fd() the memfd that holds the
 * ring so another process can map it.
 */
#ifndef USERPERF_USERPERF_H
#define USERPERF_USERPERF_H

#include <linux/perf_event.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Syscall mirrors. */
int userperf_perf_event_open(struct perf_event_attr* attr, pid_t pid, int cpu, int group_fd,
                             unsigned long flags);
int userperf_ioctl(int fd, unsigned long request, unsigned long arg);
void* userperf_mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset);
int userperf_munmap(void* addr, size_t length);
ssize_t userperf_read(int fd, void* buf, size_t count);
int userperf_close(int fd);
/* poll() over userperf handles with the kernel's perf_poll semantics: POLLIN is reported once per
 * wakeup (the bits are cleared when reported), POLLHUP when the event has no buffer or its task has
 * exited. Entries whose fd is not a userperf handle are polled as ordinary descriptors. */
int userperf_poll(struct pollfd* fds, nfds_t nfds, int timeout_ms);

/* userperf additions. */

/* The PMU type number of a registered userperf PMU ("software", "tracepoint", "synthetic",
 * "calltrace", "log"), the counterpart of /sys/bus/event_source/devices/NAME/type; -1 with
 * ENOENT if none. */
int userperf_pmu_type(const char* name);

/* A real descriptor that becomes readable at each wakeup of the event's buffer and reports POLLHUP
 * when the producer side goes away; -1 with EINVAL if the event has no buffer. Not owned by the
 * caller. */
int userperf_event_wakeup_fd(int fd);

/* The memfd holding the event's buffer (control page + data pages), for mapping in another
 * process; -1 with EINVAL if the event has no buffer. Not owned by the caller. */
int userperf_event_ring_fd(int fd);

/* The memfd holding the event's AUX area (the pages mapped at aux_offset), for mapping in another
 * process; -1 with EINVAL if the buffer has no AUX area. Not owned by the caller. */
int userperf_event_aux_fd(int fd);

/* The AUX snapshot protocol (kernel-perf-spec §4.4) for the event that owns an AUX area, done
 * right: disables the event (its source ends its handle and publishes aux_head), reads aux_head,
 * copies the newest min(len, AUX size, aux_head) bytes into buf (oldest first), and re-enables the
 * event if it was enabled. Returns the bytes copied and stores aux_head in *head_out (may be NULL);
 * -1 with errno EBADF (fd is no event), EINVAL (no AUX area) or EFAULT. */
ssize_t userperf_aux_snapshot(int fd, void* buf, size_t len, uint64_t* head_out);

/* eBPF: BPF_PROG_TYPE_PERF_EVENT programs as overflow handlers.
 *
 * userperf_bpf_prog_load() loads one program of an object file compiled for libbpf
 * (clang -O2 -target bpf; SEC("perf_event"), BTF maps, global data, subprograms): it creates the
 * object's maps, verifies the program with the kernel's rules, and returns a program descriptor
 * for userperf_ioctl(event_fd, PERF_EVENT_IOC_SET_BPF, prog_fd). prog_name NULL or "" picks the
 * first perf_event program. The verifier's log goes to log_buf (NUL-terminated, cut to log_size)
 * on success and on failure; failures are -1 with errno EACCES or EINVAL (rejected by the
 * verifier, as BPF_PROG_LOAD), ENOENT (no such program) or the loader's errno.
 * Program and map descriptors are closed with userperf_close(). */
int userperf_bpf_prog_load(const char* path, const char* prog_name, char* log_buf, size_t log_size);

/* Loads program `prog_name` of the object `prog_fd` was loaded from, sharing its maps (one
 * object's programs fill its BPF_MAP_TYPE_PROG_ARRAY maps for bpf_tail_call: store the program
 * descriptors with userperf_bpf_map_update_elem). Errors as userperf_bpf_prog_load, EBADF when
 * prog_fd is no program. */
int userperf_bpf_prog_load_from(int prog_fd, const char* prog_name, char* log_buf, size_t log_size);

/* Open, adjust, load: libbpf's bpf_object__open(), bpf_map__set_*() and bpf_object__load(), for
 * programs that size their maps at run time (bcc's libbpf-tools set a STACK_TRACE map's
 * value_size and max_entries this way).
 *
 * userperf_bpf_object_open() parses the object and creates nothing: NULL with errno as
 * userperf_bpf_prog_load() reports loader errors. Before the load, the map named `map` may get a
 * new max_entries, value_size or key_size: 0, or -1 with errno ENOENT (no such map), EBUSY (the
 * object was loaded, libbpf's error) or EINVAL (obj or map NULL; a global-data map: .data,
 * .rodata and .bss keep their section's size). The sizes are checked at the load, by the kernel's
 * map-creation rules (EINVAL, E2BIG). userperf_bpf_object_map_info() reads them back (NULL
 * pointers are skipped).
 *
 * userperf_bpf_object_set_map_initial_value() replaces the bytes a global-data map (.data,
 * .rodata, .bss) starts with, libbpf's bpf_map__set_initial_value() (what a skeleton's
 * `obj->rodata->flag = 1` before the load amounts to): `size` must be the map's value_size;
 * -1 with errno EINVAL (another size, or a map that is no global data), ENOENT or EBUSY.
 *
 * userperf_bpf_object_set_map_inner_map() gives a BPF_MAP_TYPE_ARRAY_OF_MAPS or HASH_OF_MAPS
 * its inner map's shape (type, sizes, max_entries, flags), libbpf's bpf_map__set_inner_map_fd()
 * for an outer map declared without `__array(values, ...)`: what the verifier knows of a looked-up
 * inner map and what a map stored in a slot must match. -1 with errno EINVAL (no map-in-map),
 * ENOENT or EBUSY; the shape is checked at the load by the map-creation rules.
 *
 * userperf_bpf_object_load() creates the object's maps and loads program `prog_name` (NULL or "":
 * the first perf_event program) as userperf_bpf_prog_load() does, returning the program
 * descriptor. An object is loaded once: a second attempt, after success or failure, is EINVAL
 * (libbpf's "load can't be attempted twice").
 *
 * userperf_bpf_object_close() frees the handle; a loaded program and its maps stay with their
 * descriptors. */
struct userperf_bpf_object;
struct userperf_bpf_object* userperf_bpf_object_open(const char* path);
int userperf_bpf_object_set_map_max_entries(struct userperf_bpf_object* obj, const char* map,
                                            uint32_t max_entries);
int userperf_bpf_object_set_map_value_size(struct userperf_bpf_object* obj, const char* map,
                                           uint32_t value_size);
int userperf_bpf_object_set_map_key_size(struct userperf_bpf_object* obj, const char* map,
                                         uint32_t key_size);
int userperf_bpf_object_set_map_initial_value(struct userperf_bpf_object* obj, const char* map,
                                              const void* data, size_t size);
int userperf_bpf_object_set_map_inner_map(struct userperf_bpf_object* obj, const char* map,
                                          uint32_t type, uint32_t key_size, uint32_t value_size,
                                          uint32_t max_entries, uint32_t map_flags);
int userperf_bpf_object_map_info(const struct userperf_bpf_object* obj, const char* map,
                                 uint32_t* key_size, uint32_t* value_size, uint32_t* max_entries);
int userperf_bpf_object_load(struct userperf_bpf_object* obj, const char* prog_name, char* log_buf,
                             size_t log_size);
void userperf_bpf_object_close(struct userperf_bpf_object* obj);

/* A descriptor for map `name` of the object a program was loaded from (-1 with EBADF, ENOENT). */
int userperf_bpf_map_fd(int prog_fd, const char* name);

/* The bpf() syscall's map commands, with its semantics and errnos. Values of per-CPU maps are one
 * 8-byte-aligned slot per possible CPU; a PERF_EVENT_ARRAY value is a userperf event descriptor.
 * A BPF_MAP_TYPE_ARRAY_OF_MAPS / HASH_OF_MAPS value is a map descriptor (userperf_bpf_map_fd) on
 * update (EINVAL when the map does not match the outer map's inner map, EBADF when it is no
 * descriptor) and the inner map's id on lookup. A BPF_MAP_TYPE_CGROUP_ARRAY value is a descriptor of
 * a cgroup v2 directory (O_PATH too) on update (EBADF for anything else, as the kernel); its
 * lookups fail with ENOTSUPP (524), as the kernel's. */
int userperf_bpf_map_lookup_elem(int map_fd, const void* key, void* value);
int userperf_bpf_map_update_elem(int map_fd, const void* key, const void* value, uint64_t flags);
int userperf_bpf_map_delete_elem(int map_fd, const void* key);
int userperf_bpf_map_get_next_key(int map_fd, const void* key, void* next_key);

/* The consumer of BPF_MAP_TYPE_RINGBUF maps, libbpf's ring_buffer__new/add/poll/consume/free/
 * epoll_fd with libbpf's conventions: userperf_ring_buffer_new() returns NULL with errno set
 * (EBADF: no map descriptor; EINVAL: not a RINGBUF map or no callback); the others return a
 * negative errno (and set errno). The callback gets each submitted record in order (discarded
 * records are skipped); a negative return stops consumption and is what poll/consume return
 * (the record counts as consumed), any other return goes on. poll() sleeps up to timeout_ms (-1:
 * no limit) until a ring holds data or a producer wakes it (bpf_ringbuf_submit/output wake a
 * consumer that has caught up, BPF_RB_FORCE_WAKEUP always, BPF_RB_NO_WAKEUP never), then
 * consumes; it and consume() return the number of records consumed (at most INT_MAX). One
 * consumer per map: two would take each other's wakeups. Not for signal handlers. */
struct userperf_ring_buffer;
typedef int (*userperf_ring_buffer_sample_fn)(void* ctx, void* data, size_t size);
struct userperf_ring_buffer* userperf_ring_buffer_new(int map_fd,
                                                      userperf_ring_buffer_sample_fn sample_cb,
                                                      void* ctx);
int userperf_ring_buffer_add(struct userperf_ring_buffer* rb, int map_fd,
                             userperf_ring_buffer_sample_fn sample_cb, void* ctx);
int userperf_ring_buffer_poll(struct userperf_ring_buffer* rb, int timeout_ms);
int userperf_ring_buffer_consume(struct userperf_ring_buffer* rb);
int userperf_ring_buffer_epoll_fd(const struct userperf_ring_buffer* rb);
void userperf_ring_buffer_free(struct userperf_ring_buffer* rb);

/* Where bpf_trace_printk() lines go (the kernel's trace_pipe); stderr by default. */
void userperf_bpf_set_trace_fd(int fd);

#ifdef __cplusplus
}
#endif

#endif /* USERPERF_USERPERF_H */
