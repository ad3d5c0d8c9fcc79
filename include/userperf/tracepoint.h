/* userperf user tracepoints (C11 and C++): typed events a program defines and fires, recorded by
 * `userperf record -e provider:name` as perf tracepoint samples (perf script prints their fields).
 *
 *   USERPERF_TRACEPOINT(myapp, request, (uint64_t, id), (const char*, path), (int32_t, status))
 *   ...
 *   userperf_trace(myapp, request, id, path, status);
 *
 * USERPERF_TRACEPOINT defines, in the translation unit that expands it (each TU has its own copy,
 * so it may sit in a header), a descriptor `userperf_tp_<provider>_<name>`, an inline emit
 * function with one typed parameter per field, and a constructor/destructor pair that registers
 * and unregisters the descriptor. 1 to 8 fields. Field types: the integer types (8 to 64 bits,
 * signed or not; bool is u8), `const char*` / `char*` (a NUL-terminated string, recorded as
 * libtraceevent's `__data_loc char[]`; NULL records "(null)") and `userperf_bytes` (a pointer and
 * a length, recorded as `__data_loc u8[]`). Provider, name and field names are C identifiers of at
 * most 63 characters.
 *
 * Cost: while the tracepoint is not recorded, userperf_trace is one relaxed load of the
 * descriptor's `enabled` word and a predictable branch - no call. When recorded, it calls
 * userperf_tracepoint_fire, which writes one sample per event the calling thread has for it.
 *
 * No link dependency: the register/unregister/fire functions are weak references. They are
 * defined by the userperf library (libuserperf_agent.so, preloaded by `userperf record`); without
 * it they are absent, registration does not happen and `enabled` stays 0 forever. Objects loaded
 * later with dlopen register when their constructors run. (Needs a position-independent
 * executable - the default - or -Wl,-z,dynamic-undefined-weak, so that the weak references are
 * resolved at load time.) */
#ifndef USERPERF_TRACEPOINT_H
#define USERPERF_TRACEPOINT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Field kinds (the descriptor's ABI: values never change). */
enum userperf_tp_kind {
  USERPERF_TP_U8 = 1,
  USERPERF_TP_U16 = 2,
  USERPERF_TP_U32 = 3,
  USERPERF_TP_U64 = 4,
  USERPERF_TP_S8 = 5,
  USERPERF_TP_S16 = 6,
  USERPERF_TP_S32 = 7,
  USERPERF_TP_S64 = 8,
  USERPERF_TP_STRING = 9, /* the argument is a const char* */
  USERPERF_TP_BYTES = 10  /* the argument is a userperf_bytes */
};

/* A byte-array argument. */
typedef struct userperf_bytes {
  const void* data;
  size_t len;
} userperf_bytes;

struct userperf_tp_field {
  const char* name;
  uint32_t kind; /* enum userperf_tp_kind */
};

#define USERPERF_TP_ABI_VERSION 1
#define USERPERF_TP_MAX_FIELDS 16 /* what the library accepts (the macros define up to 8) */
#define USERPERF_TP_MAX_NAME 63   /* provider, name and field names */

struct userperf_tracepoint {
  int enabled;          /* nonzero while an event records it; written by the library only */
  uint32_t abi_version; /* USERPERF_TP_ABI_VERSION */
  const char* provider;
  const char* name;
  uint32_t nr_fields;
  const struct userperf_tp_field* fields;
  uint32_t library_slot; /* the library's own word: 0 until registered and bound */
};

/* Library entry points. Programs that use tracepoints reference them weakly; the library (which
 * defines USERPERF_TRACEPOINT_IMPLEMENTATION) defines them. */
#ifdef USERPERF_TRACEPOINT_IMPLEMENTATION
#define USERPERF_TP_WEAK
#else
#define USERPERF_TP_WEAK __attribute__((weak))
#endif
/* 0, or -1 with errno EINVAL (bad descriptor: see userperf_tracepoint_check), EEXIST (the same
 * name registered with other fields: the first descriptor bound to a name fixes its fields for the
 * life of the process, even after every descriptor of it was unregistered), ENOSPC (too many
 * tracepoints). A refusal is also printed once
 * to stderr, since the constructor that registers cannot report it. */
int userperf_tracepoint_register(struct userperf_tracepoint* tp) USERPERF_TP_WEAK;
void userperf_tracepoint_unregister(struct userperf_tracepoint* tp) USERPERF_TP_WEAK;
/* args[i] points at the value of field i (for strings: at the char*; for byte arrays: at the
 * userperf_bytes); call_site is the sample's IP. SIGNAL-SAFE. */
void userperf_tracepoint_fire(const struct userperf_tracepoint* tp, const void* const* args,
                              const void* call_site) USERPERF_TP_WEAK;
/* Validates a descriptor without registering it: 0, or -1 with errno EINVAL and a one-line reason
 * in `why` (when why_size > 0). Not weak: call it only when linked with the userperf library. */
int userperf_tracepoint_check(const struct userperf_tracepoint* tp, char* why, size_t why_size);

#ifdef __cplusplus
} /* extern "C" */
#endif

/* ---- field kinds from C types ---------------------------------------------------------------- */
#ifdef __cplusplus
#include <type_traits>
namespace userperf_tp_detail {
template <class T>
constexpr uint32_t kind_of() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, const char*> || std::is_same_v<U, char*>) {
    return USERPERF_TP_STRING;
  } else if constexpr (std::is_same_v<U, userperf_bytes>) {
    return USERPERF_TP_BYTES;
  } else {
    static_assert(std::is_integral_v<U> && sizeof(U) <= 8,
                  "tracepoint fields are integers, const char* or userperf_bytes");
    constexpr uint32_t log2 = sizeof(U) == 1 ? 0 : sizeof(U) == 2 ? 1 : sizeof(U) == 4 ? 2 : 3;
    return (std::is_signed_v<U> ? USERPERF_TP_S8 : USERPERF_TP_U8) + log2;
  }
}
}  // namespace userperf_tp_detail
#define USERPERF_TP_KIND(type) (userperf_tp_detail::kind_of<type>())
#else
#define USERPERF_TP_SIZED_(type, s) \
  (sizeof(type) == 1 ? s##8 : sizeof(type) == 2 ? s##16 : sizeof(type) == 4 ? s##32 : s##64)
/* No default: an unsupported type does not compile. */
#define USERPERF_TP_KIND(type) \
  _Generic(*(type*)0,                                                                  \
      _Bool: USERPERF_TP_U8,                                                           \
      char: ((char)-1 < 0 ? USERPERF_TP_S8 : USERPERF_TP_U8),                          \
      signed char: USERPERF_TP_S8,                                                     \
      unsigned char: USERPERF_TP_U8,                                                   \
      short: USERPERF_TP_S16,                                                          \
      unsigned short: USERPERF_TP_U16,                                                 \
      int: USERPERF_TP_SIZED_(int, USERPERF_TP_S),                                     \
      unsigned int: USERPERF_TP_SIZED_(unsigned int, USERPERF_TP_U),                   \
      long: USERPERF_TP_SIZED_(long, USERPERF_TP_S),                                   \
      unsigned long: USERPERF_TP_SIZED_(unsigned long, USERPERF_TP_U),                 \
      long long: USERPERF_TP_S64,                                                      \
      unsigned long long: USERPERF_TP_U64,                                             \
      char*: USERPERF_TP_STRING,                                                       \
      const char*: USERPERF_TP_STRING,                                                 \
      userperf_bytes: USERPERF_TP_BYTES)
#endif

/* ---- the per-field expansions, applied to each "(type, name)" pair -------------------------- */
#define USERPERF_TP_FIELD_(type, fname) \
  { #fname, (uint32_t)USERPERF_TP_KIND(type) }
#define USERPERF_TP_FIELD(pair) USERPERF_TP_FIELD_ pair
#define USERPERF_TP_PARAM_(type, fname) type fname
#define USERPERF_TP_PARAM(pair) USERPERF_TP_PARAM_ pair
#define USERPERF_TP_ADDR_(type, fname) (const void*)&fname
#define USERPERF_TP_ADDR(pair) USERPERF_TP_ADDR_ pair
#define USERPERF_TP_NAME_(type, fname) fname
#define USERPERF_TP_NAME(pair) USERPERF_TP_NAME_ pair

#define USERPERF_TP_NARGS_(_1, _2, _3, _4, _5, _6, _7, _8, n, ...) n
#define USERPERF_TP_NARGS(...) USERPERF_TP_NARGS_(__VA_ARGS__, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define USERPERF_TP_CAT_(a, b) a##b
#define USERPERF_TP_CAT(a, b) USERPERF_TP_CAT_(a, b)
#define USERPERF_TP_MAP_1(m, a) m(a)
#define USERPERF_TP_MAP_2(m, a, ...) m(a), USERPERF_TP_MAP_1(m, __VA_ARGS__)
#define USERPERF_TP_MAP_3(m, a, ...) m(a), USERPERF_TP_MAP_2(m, __VA_ARGS__)
#define USERPERF_TP_MAP_4(m, a, ...) m(a), USERPERF_TP_MAP_3(m, __VA_ARGS__)
#define USERPERF_TP_MAP_5(m, a, ...) m(a), USERPERF_TP_MAP_4(m, __VA_ARGS__)
#define USERPERF_TP_MAP_6(m, a, ...) m(a), USERPERF_TP_MAP_5(m, __VA_ARGS__)
#define USERPERF_TP_MAP_7(m, a, ...) m(a), USERPERF_TP_MAP_6(m, __VA_ARGS__)
#define USERPERF_TP_MAP_8(m, a, ...) m(a), USERPERF_TP_MAP_7(m, __VA_ARGS__)
#define USERPERF_TP_MAP(m, ...) \
  USERPERF_TP_CAT(USERPERF_TP_MAP_, USERPERF_TP_NARGS(__VA_ARGS__))(m, __VA_ARGS__)

#define USERPERF_TP_DESC(provider, name) userperf_tp_##provider##_##name
#define USERPERF_TP_EMIT(provider, name) userperf_tp_emit_##provider##_##name

/* Defines tracepoint provider:name with 1 to 8 fields, each "(type, field_name)". The slow path
 * is out of line: the inlined check stores nothing (the arguments' addresses are taken only
 * there), and its return address is the program's call site (the sample's IP). */
#define USERPERF_TRACEPOINT(provider, name, ...)                                                \
  static const struct userperf_tp_field userperf_tp_fields_##provider##_##name[] = {            \
      USERPERF_TP_MAP(USERPERF_TP_FIELD, __VA_ARGS__)};                                         \
  static struct userperf_tracepoint USERPERF_TP_DESC(provider, name) = {                        \
      0,     USERPERF_TP_ABI_VERSION,        #provider,                                         \
      #name, USERPERF_TP_NARGS(__VA_ARGS__), userperf_tp_fields_##provider##_##name,            \
      0};                                                                                       \
  __attribute__((constructor)) static void userperf_tp_register_##provider##_##name(void) {     \
    if (userperf_tracepoint_register) {                                                         \
      userperf_tracepoint_register(&USERPERF_TP_DESC(provider, name));                          \
    }                                                                                           \
  }                                                                                             \
  __attribute__((destructor)) static void userperf_tp_unregister_##provider##_##name(void) {    \
    if (userperf_tracepoint_unregister) {                                                       \
      userperf_tracepoint_unregister(&USERPERF_TP_DESC(provider, name));                        \
    }                                                                                           \
  }                                                                                             \
  __attribute__((noinline, cold, unused)) static void userperf_tp_fire_##provider##_##name(     \
      USERPERF_TP_MAP(USERPERF_TP_PARAM, __VA_ARGS__)) {                                        \
    const void* const userperf_tp_args[] = {USERPERF_TP_MAP(USERPERF_TP_ADDR, __VA_ARGS__)};    \
    userperf_tracepoint_fire(&USERPERF_TP_DESC(provider, name), userperf_tp_args,               \
                             __builtin_return_address(0));                                      \
  }                                                                                             \
  static inline __attribute__((always_inline)) void USERPERF_TP_EMIT(                           \
      provider, name)(USERPERF_TP_MAP(USERPERF_TP_PARAM, __VA_ARGS__)) {                        \
    if (__builtin_expect(                                                                       \
            __atomic_load_n(&USERPERF_TP_DESC(provider, name).enabled, __ATOMIC_RELAXED), 0)) { \
      userperf_tp_fire_##provider##_##name(USERPERF_TP_MAP(USERPERF_TP_NAME, __VA_ARGS__));     \
    }                                                                                           \
  }

/* Fires provider:name with one argument per field (converted to the field's type). */
#define userperf_trace(provider, name, ...) USERPERF_TP_EMIT(provider, name)(__VA_ARGS__)

/* Whether provider:name is being recorded (to skip computing expensive arguments). */
#define userperf_trace_enabled(provider, name) \
  (__atomic_load_n(&USERPERF_TP_DESC(provider, name).enabled, __ATOMIC_RELAXED) != 0)

#endif /* USERPERF_TRACEPOINT_H */
