// The kernel's verdict on each perf_event program of a BPF object, for scripts/bpf-trial.sh.
// Usage: bpf-trial-load OBJECT [MAP.FIELD=VALUE ...]   (FIELD: value_size, max_entries, key_size;
//        MAP.inner_array=KEY_SIZE:VALUE_SIZE:MAX_ENTRIES:FLAGS gives a map-in-map its inner map)
// Loads every perf_event program alone (the others' autoload off, so one refusal does not hide
// the rest) with libbpf, as a tool would, after sizing maps as the tool's user space does.
// Prints one line per program: "PROGRAM<TAB>accepted" or "PROGRAM<TAB>rejected<TAB>errno
// name<TAB>reason", the reason being the last line of the verifier log before its "processed"
// summary (or libbpf's own message when the kernel's log is empty). Exit 0 unless the object
// cannot be opened. Sections "perf_event/..." are perf_event programs, as ebpf_exporter registers
// them with libbpf_register_prog_handler.
#define _GNU_SOURCE  // strerrorname_np
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char libbpf_message[4096];

// libbpf's first warning of a load: the reason when the kernel wrote no log.
static int keep_first_warning(enum libbpf_print_level level, const char* format, va_list args) {
  if (level != LIBBPF_WARN) return 0;
  char line[sizeof libbpf_message];
  vsnprintf(line, sizeof line, format, args);
  line[strcspn(line, "\n")] = '\0';
  if (line[0] != '\0' && libbpf_message[0] == '\0') memcpy(libbpf_message, line, sizeof line);
  return 0;
}

// The verifier log's reason: its last line that is not the closing statistics.
static void last_reason(const char* log, char* out, size_t size) {
  out[0] = '\0';
  const char* line = log;
  while (*line != '\0') {
    const char* end = strchr(line, '\n');
    size_t length = end ? (size_t)(end - line) : strlen(line);
    if (length > 0 && strncmp(line, "processed ", 10) != 0 &&
        strncmp(line, "verification time", 17) != 0 && strncmp(line, "stack depth", 11) != 0 &&
        strncmp(line, "-- END PROG LOAD LOG --", 23) != 0) {
      if (length >= size) length = size - 1;
      memcpy(out, line, length);
      out[length] = '\0';
    }
    if (!end) break;
    line = end + 1;
  }
}

// An inner map's shape for a map-in-map, as the tool's user space creates it before the load.
static int set_inner_array(struct bpf_map* map, const char* shape) {
  unsigned key_size, value_size, max_entries, flags;
  if (sscanf(shape, "%u:%u:%u:%i", &key_size, &value_size, &max_entries, &flags) != 4) {
    fprintf(stderr, "bad inner_array '%s' (KEY_SIZE:VALUE_SIZE:MAX_ENTRIES:FLAGS)\n", shape);
    return -EINVAL;
  }
  LIBBPF_OPTS(bpf_map_create_opts, options, .map_flags = flags);
  int inner = bpf_map_create(BPF_MAP_TYPE_ARRAY, "inner_shape", key_size, value_size, max_entries,
                             &options);
  if (inner < 0) return inner;
  return bpf_map__set_inner_map_fd(map, inner);
}

static int apply_map_setting(struct bpf_object* object, const char* setting) {
  char map_name[256], field[64], text[64];
  unsigned long value;
  if (sscanf(setting, "%255[^.].%63[^=]=%63s", map_name, field, text) != 3) {
    fprintf(stderr, "bad map setting '%s' (MAP.FIELD=VALUE)\n", setting);
    return -EINVAL;
  }
  struct bpf_map* map = bpf_object__find_map_by_name(object, map_name);
  if (!map) {
    fprintf(stderr, "no map '%s'\n", map_name);
    return -ENOENT;
  }
  if (strcmp(field, "inner_array") == 0) return set_inner_array(map, text);
  value = strtoul(text, NULL, 0);
  if (strcmp(field, "value_size") == 0) return bpf_map__set_value_size(map, (__u32)value);
  if (strcmp(field, "max_entries") == 0) return bpf_map__set_max_entries(map, (__u32)value);
  if (strcmp(field, "key_size") == 0) return bpf_map__set_key_size(map, (__u32)value);
  fprintf(stderr, "unknown map field '%s'\n", field);
  return -EINVAL;
}

static struct bpf_object* open_object(const char* path, int settings, char** setting) {
  struct bpf_object* object = bpf_object__open_file(path, NULL);
  if (!object) return NULL;
  for (int i = 0; i < settings; i++)
    if (apply_map_setting(object, setting[i]) != 0) {
      bpf_object__close(object);
      return NULL;
    }
  return object;
}

// Loads the object's perf_event programs (only `only` when it is not NULL; the others' autoload
// off) in a fresh object, libbpf loading an object once. With `only`, prints its verdict.
static int load_programs(const char* path, int settings, char** setting, const char* only) {
  static char log[16 << 20];
  struct bpf_object* object = open_object(path, settings, setting);
  if (!object) return -EINVAL;
  struct bpf_program* program;
  bpf_object__for_each_program(program, object) {
    bool chosen = bpf_program__type(program) == BPF_PROG_TYPE_PERF_EVENT &&
                  (only == NULL || strcmp(bpf_program__name(program), only) == 0);
    bpf_program__set_autoload(program, chosen);
    if (chosen && only != NULL) {
      log[0] = '\0';
      bpf_program__set_log_buf(program, log, sizeof log);
      bpf_program__set_log_level(program, 1);
    }
  }
  libbpf_message[0] = '\0';
  int error = bpf_object__load(object);
  if (only != NULL && error == 0) {
    printf("%s\taccepted\n", only);
  } else if (only != NULL) {
    char reason[4096];
    last_reason(log, reason, sizeof reason);
    const char* errno_name = strerrorname_np(-error);
    printf("%s\trejected\t%s\t%s\n", only, errno_name ? errno_name : "?",
           reason[0] != '\0' ? reason : libbpf_message);
  }
  bpf_object__close(object);
  return error;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s OBJECT [MAP.FIELD=VALUE ...]\n", argv[0]);
    return 2;
  }
  libbpf_set_print(keep_first_warning);
  LIBBPF_OPTS(libbpf_prog_handler_opts, handler_opts);
  libbpf_register_prog_handler("perf_event/", BPF_PROG_TYPE_PERF_EVENT, 0, &handler_opts);

  struct bpf_object* names = open_object(argv[1], argc - 2, argv + 2);
  if (!names) {
    fprintf(stderr, "cannot open %s: %s\n", argv[1], libbpf_message);
    return 2;
  }
  // All perf_event programs together first, as the tool loads them (a PROG_ARRAY's static
  // slots name programs of the same object); only when that fails, each alone, so one refusal
  // does not hide the rest.
  if (load_programs(argv[1], argc - 2, argv + 2, NULL) == 0) {
    struct bpf_program* listed;
    bpf_object__for_each_program(listed, names) {
      if (bpf_program__type(listed) == BPF_PROG_TYPE_PERF_EVENT)
        printf("%s\taccepted\n", bpf_program__name(listed));
    }
  } else {
    struct bpf_program* listed;
    bpf_object__for_each_program(listed, names) {
      if (bpf_program__type(listed) == BPF_PROG_TYPE_PERF_EVENT)
        load_programs(argv[1], argc - 2, argv + 2, bpf_program__name(listed));
    }
  }
  bpf_object__close(names);
  return 0;
}
