// Descriptors for loaded programs and their maps (what bpf() hands out as prog and map fds), and
// the engine's resolver for PERF_EVENT_IOC_SET_BPF. Descriptors are real ones (eventfds), so they
// never collide with event descriptors or the process's own files.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "bpf/isa/program_image.hpp"
#include "bpf/maps/ringbuf_map.hpp"
#include "bpf/perf/bpf_overflow_handler.hpp"
#include "bpf/perf/event_resolver.hpp"
#include "core/engine.hpp"

namespace userperf::bpf {

// Which tier runs a loaded program (bpf/runtime's ProgramLoadOptions).
struct ProgramTier {
  bool jit = true;           // x86-64 code unless USERPERF_BPF_JIT=0; false: the interpreter
  bool say_fallback = true;  // say once on stderr when a program wanted on the JIT is not
};

class BpfRegistry : public core::HandlerResolver {
 public:
  // Registers itself as the engine's handler resolver.
  explicit BpfRegistry(core::Engine& engine);
  ~BpfRegistry() override;
  BpfRegistry(const BpfRegistry&) = delete;
  BpfRegistry& operator=(const BpfRegistry&) = delete;

  // Loads program `name` ("" = the first perf_event program) of an object (a loader's image: the
  // ELF loader's, or one decoded from bpf/isa/image_codec): maps created, verified (the verifier's
  // log in *log, also on success), fixed up. Returns a program descriptor or -errno
  // (EACCES/EINVAL/E2BIG: rejected; ENOENT: no such program; others: the object could not be
  // loaded). Constants are blinded in the JIT's code (the object is not trusted). PROG_ARRAY slots
  // the object initialises statically (MapSpec::initial_slots; map-in-map slots too) are filled
  // from the same object's programs, loaded for it (as libbpf's bpf_object__load).
  int load_program(ObjectImage image, const std::string& name, std::string* log,
                   ProgramTier tier = {});

  // Loads program `name` of the object `prog_fd`'s program was loaded from, sharing its maps (so
  // one object's programs can fill its PROG_ARRAY maps for bpf_tail_call, as libbpf's
  // bpf_object__load does with every program of an object). -EBADF: prog_fd is no program.
  int load_program_from(int prog_fd, const std::string& name, std::string* log);

  // A descriptor for map `name` of the object a program was loaded from (-EBADF, -ENOENT).
  int map_fd(int prog_fd, const std::string& name);

  // The bpf() MAP_*_ELEM commands on a map descriptor. Keys and values are the caller's memory,
  // read and written without trusting it (-EFAULT). 0 or -errno.
  int map_lookup_elem(int fd, const void* key, void* value);
  int map_update_elem(int fd, const void* key, const void* value, std::uint64_t flags);
  int map_delete_elem(int fd, const void* key);
  int map_get_next_key(int fd, const void* key, void* next_key);

  // The RINGBUF map behind a map descriptor, for a consumer (it keeps the map's object alive):
  // 0, -EBADF (no map descriptor) or -EINVAL (another map type), as libbpf's ring_buffer__add.
  int ringbuf(int fd, std::shared_ptr<RingbufMap>& out);

  // Closes a program or map descriptor (-EBADF when it is neither). A program attached to an
  // event lives on with the event.
  int close(int fd);

  std::shared_ptr<BpfOverflowHandler> program(int fd);
  int resolve_handler(int fd, std::shared_ptr<core::OverflowHandler>& out) override;

 private:
  struct MapEntry {
    std::shared_ptr<BpfObject> object;  // keeps the map alive
    Map* map = nullptr;
  };
  std::shared_ptr<MapEntry> map_entry(int fd);
  int load_into(std::shared_ptr<BpfObject> object, std::size_t index, std::string* log,
                ProgramTier tier);
  int fill_initial_slots(const std::shared_ptr<BpfObject>& object, std::size_t loaded_index,
                         int loaded_fd, ProgramTier tier, std::string* log);

  // PROG_ARRAY slots: a program descriptor becomes a reference to its LoadedProgram.
  class ProgramSlots;
  // ARRAY_OF_MAPS / HASH_OF_MAPS slots: a map descriptor becomes its Map.
  class MapSlots;

  core::Engine& engine_;
  std::shared_ptr<EventResolver> resolver_;
  std::shared_ptr<ProgramSlots> program_slots_;
  std::shared_ptr<MapSlots> map_slots_;
  std::mutex mutex_;  // taken after the engine's lock, never before it
  std::unordered_map<int, std::shared_ptr<BpfOverflowHandler>> programs_;
  std::unordered_map<int, std::shared_ptr<MapEntry>> maps_;
};

}  // namespace userperf::bpf
