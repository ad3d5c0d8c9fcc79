/* Loads PLUGIN with dlopen after it started and calls plugin_work in it for 0.4 s of CPU.
 * Usage: dlopen_host PLUGIN.so */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: dlopen_host PLUGIN.so\n");
    return 2;
  }
  void* handle = dlopen(argv[1], RTLD_NOW);
  if (handle == NULL) {
    fprintf(stderr, "dlopen_host: %s\n", dlerror());
    return 1;
  }
  uint64_t (*work)(double) = (uint64_t(*)(double))dlsym(handle, "plugin_work");
  if (work == NULL) {
    fprintf(stderr, "dlopen_host: %s\n", dlerror());
    return 1;
  }
  printf("dlopen_host: %llx\n", (unsigned long long)work(0.4));
  dlclose(handle);
  return 0;
}
