#include "bpf/perf/bpf_registry.hpp"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "bpf/perf/find_vma.hpp"
#include "bpf/perf/perf_event_ctx.hpp"
#include "bpf/perf/perf_helpers.hpp"
#include "support/descriptors.hpp"
#include "support/user_memory.hpp"

namespace userperf::bpf {

// Slots hold a counted reference per stored object (a program of a PROG_ARRAY, an inner map of a
// map-in-map). An object whose last slot reference goes is kept (retired) until the registry
// goes: a run that fetched it from a slot may still be in it (the kernel frees it after an RCU
// grace period). An object stored in a map of its own object keeps that object alive (the kernel
// breaks the cycle when the map's last user reference is closed; userperf does not yet).
class SlotReferences {
 public:
  void hold(void* object, std::shared_ptr<void> owner) {
    std::lock_guard lock(mutex_);
    Held& held = held_[object];
    if (held.refs++ == 0) held.owner = std::move(owner);
  }
  void put(void* object) {
    std::lock_guard lock(mutex_);
    const auto it = held_.find(object);
    if (it == held_.end()) return;
    if (--it->second.refs == 0) {
      retired_.push_back(std::move(it->second.owner));
      held_.erase(it);
    }
  }

 private:
  struct Held {
    int refs = 0;
    std::shared_ptr<void> owner;  // keeps the object alive
  };
  std::mutex mutex_;
  std::unordered_map<void*, Held> held_;
  std::vector<std::shared_ptr<void>> retired_;
};

class BpfRegistry::ProgramSlots : public ProgResolver {
 public:
  explicit ProgramSlots(BpfRegistry& registry) : registry_(registry) {}

  Expected<void*> get(int fd) override {
    const std::shared_ptr<BpfOverflowHandler> handler = registry_.program(fd);
    // bpf_prog_get: no descriptor is EBADF, a descriptor of anything else EINVAL.
    if (handler == nullptr) {
      return make_error(fcntl(fd, F_GETFD) < 0 ? EBADF : EINVAL, "not a program descriptor");
    }
    const std::shared_ptr<LoadedProgram>& program = handler->shared_program();
    refs_.hold(program.get(), program);
    return static_cast<void*>(program.get());
  }
  void put(void* object) override { refs_.put(object); }

  std::uint32_t prog_type(void* object) override {
    return static_cast<LoadedProgram*>(object)->image().prog_type;
  }
  std::uint32_t prog_id(void* object) override { return static_cast<LoadedProgram*>(object)->id(); }

 private:
  BpfRegistry& registry_;
  SlotReferences refs_;
};

// Map-in-map slots: a map descriptor becomes the `Map*` (map_in_map.hpp), its object held.
class BpfRegistry::MapSlots : public FdResolver {
 public:
  explicit MapSlots(BpfRegistry& registry) : registry_(registry) {}

  Expected<void*> get(int fd) override {
    const std::shared_ptr<MapEntry> entry = registry_.map_entry(fd);
    // bpf_map_fd_get_ptr -> __bpf_map_get: no descriptor is EBADF, anything else EINVAL.
    if (entry == nullptr) {
      return make_error(fcntl(fd, F_GETFD) < 0 ? EBADF : EINVAL, "not a map descriptor");
    }
    refs_.hold(entry->map, entry->object);
    return static_cast<void*>(entry->map);
  }
  void put(void* object) override { refs_.put(object); }

 private:
  BpfRegistry& registry_;
  SlotReferences refs_;
};

BpfRegistry::BpfRegistry(core::Engine& engine)
    : engine_(engine),
      resolver_(std::make_shared<EventResolver>(engine)),
      program_slots_(std::make_shared<ProgramSlots>(*this)),
      map_slots_(std::make_shared<MapSlots>(*this)) {
  engine_.set_handler_resolver(this);
}

BpfRegistry::~BpfRegistry() {
  engine_.set_handler_resolver(nullptr);
  for (const auto& [fd, program] : programs_) ::close(fd);
  for (const auto& [fd, map] : maps_) ::close(fd);
}

int BpfRegistry::load_program(ObjectImage image, const std::string& name, std::string* log,
                              ProgramTier tier) {
  std::size_t index = image.programs.size();
  for (std::size_t i = 0; i < image.programs.size(); ++i) {
    const ProgramImage& p = image.programs[i];
    if (name.empty() ? p.prog_type == BPF_PROG_TYPE_PERF_EVENT : p.name == name) {
      index = i;
      break;
    }
  }
  if (index == image.programs.size()) {
    if (log) *log = name.empty() ? "no perf_event program" : "no program '" + name + "'";
    return -ENOENT;
  }
  auto object = BpfObject::create(std::move(image), resolver_, program_slots_, map_slots_);
  if (!object) {
    if (log) *log = object.error().message;
    return -object.error().code;
  }
  const int fd = load_into(*object, index, log, tier);
  if (fd < 0) return fd;
  if (const int err = fill_initial_slots(*object, index, fd, tier, log); err < 0) {
    close(fd);
    return err;
  }
  return fd;
}

// bpf_object__init_prog_arrays and init_map_in_map_slots: after the load, each statically
// initialised slot gets its program, loaded from the same object (the one just loaded is reused),
// or its map of the same object. A slot keeps its own reference, so the descriptor used to store
// it is closed once stored. A target the verifier refuses fails the whole load, as libbpf's
// bpf_object__load fails on any program.
int BpfRegistry::fill_initial_slots(const std::shared_ptr<BpfObject>& object,
                                    std::size_t loaded_index, int loaded_fd, ProgramTier tier,
                                    std::string* log) {
  const auto& programs = object->image().programs;
  for (std::size_t m = 0; m < object->image().maps.size(); ++m) {
    const MapSpec& spec = object->image().maps[m];
    const bool map_in_map = is_map_in_map(spec.type);
    for (const MapSpec::Slot& slot : spec.initial_slots) {
      const std::string where = "map '" + spec.name + "' slot [" + std::to_string(slot.index) + "]";
      int fd = -ENOENT;
      if (map_in_map) {
        fd = map_fd(loaded_fd, slot.name);
        if (fd < 0) {
          if (log) *log = where + ": no map '" + slot.name + "'";
          return fd;
        }
      } else {
        const auto target =
            std::find_if(programs.begin(), programs.end(),
                         [&](const ProgramImage& p) { return p.name == slot.name; });
        if (target == programs.end()) {
          if (log) *log = "map '" + spec.name + "': no program '" + slot.name + "'";
          return -ENOENT;
        }
        const auto target_index = static_cast<std::size_t>(target - programs.begin());
        std::string target_log;
        fd = target_index == loaded_index ? loaded_fd
                                          : load_into(object, target_index, &target_log, tier);
        if (fd < 0) {
          if (log) *log = where + ": program '" + slot.name + "' was not loaded:\n" + target_log;
          return fd;
        }
      }
      const auto value = static_cast<std::uint32_t>(fd);
      const int err = object->maps()[m]->update_elem(&slot.index, &value, BPF_ANY);
      if (fd != loaded_fd) close(fd);
      if (err < 0) {
        if (log) *log = where + ": " + std::strerror(-err);
        return err;
      }
    }
  }
  return 0;
}

int BpfRegistry::load_program_from(int prog_fd, const std::string& name, std::string* log) {
  const std::shared_ptr<BpfOverflowHandler> handler = program(prog_fd);
  if (handler == nullptr) return -EBADF;
  std::shared_ptr<BpfObject> object = handler->program().object();
  const auto& programs = object->image().programs;
  for (std::size_t i = 0; i < programs.size(); ++i) {
    if (programs[i].name == name) return load_into(std::move(object), i, log, ProgramTier{});
  }
  if (log) *log = "no program '" + name + "'";
  return -ENOENT;
}

int BpfRegistry::load_into(std::shared_ptr<BpfObject> object, std::size_t index, std::string* log,
                           ProgramTier tier) {
  ProgramLoadOptions options;
  options.helpers = perf_event_helper_table();
  options.ctx_layout = &perf_event_ctx_layout();
  options.callback_helpers = {{BPF_FUNC_find_vma, &find_vma_driver()}};
  options.probe_read = &probe_read_synthetic;
  options.jit = tier.jit;
  options.say_fallback = tier.say_fallback;
  auto program = LoadedProgram::load(std::move(object), index, options);
  if (!program) {
    if (log) *log = program.error().message;
    return -program.error().code;
  }
  if (log) *log = (*program)->verdict().log;
  const int fd = support::place_descriptor(eventfd(0, EFD_CLOEXEC));
  if (fd < 0) return -errno;
  std::lock_guard lock(mutex_);
  programs_.emplace(fd, std::make_shared<BpfOverflowHandler>(std::move(*program)));
  return fd;
}

int BpfRegistry::map_fd(int prog_fd, const std::string& name) {
  const std::shared_ptr<BpfOverflowHandler> handler = program(prog_fd);
  if (handler == nullptr) return -EBADF;
  const std::shared_ptr<BpfObject>& object = handler->program().object();
  Map* map = object->map(name);
  if (map == nullptr) return -ENOENT;
  auto entry = std::make_shared<MapEntry>();
  entry->object = object;
  entry->map = map;
  const int fd = support::place_descriptor(eventfd(0, EFD_CLOEXEC));
  if (fd < 0) return -errno;
  std::lock_guard lock(mutex_);
  maps_.emplace(fd, std::move(entry));
  return fd;
}

std::shared_ptr<BpfRegistry::MapEntry> BpfRegistry::map_entry(int fd) {
  std::lock_guard lock(mutex_);
  const auto it = maps_.find(fd);
  return it == maps_.end() ? nullptr : it->second;
}

int BpfRegistry::ringbuf(int fd, std::shared_ptr<RingbufMap>& out) {
  const auto entry = map_entry(fd);
  if (entry == nullptr) return -EBADF;
  if (entry->map->spec().type != BPF_MAP_TYPE_RINGBUF) return -EINVAL;
  // Shares ownership with the object, so the map outlives a close of its descriptor.
  out = std::shared_ptr<RingbufMap>(entry, static_cast<RingbufMap*>(entry->map));
  return 0;
}

// The map operations run without the registry lock: a PERF_EVENT_ARRAY update takes the engine's.
int BpfRegistry::map_lookup_elem(int fd, const void* key, void* value) {
  const auto entry = map_entry(fd);
  if (entry == nullptr) return -EBADF;
  Map& map = *entry->map;
  std::vector<std::uint8_t> k(map.spec().key_size);
  std::vector<std::uint8_t> v(map.user_value_size());
  if (!support::read_user(key, k.data(), k.size())) return -EFAULT;
  if (const int rc = map.lookup_elem(k.data(), v.data()); rc != 0) return rc;
  return support::write_user(value, v.data(), v.size()) ? 0 : -EFAULT;
}

int BpfRegistry::map_update_elem(int fd, const void* key, const void* value, std::uint64_t flags) {
  const auto entry = map_entry(fd);
  if (entry == nullptr) return -EBADF;
  Map& map = *entry->map;
  std::vector<std::uint8_t> k(map.spec().key_size);
  std::vector<std::uint8_t> v(map.user_value_size());
  if (!support::read_user(key, k.data(), k.size()) ||
      !support::read_user(value, v.data(), v.size())) {
    return -EFAULT;
  }
  return map.update_elem(k.data(), v.data(), flags);
}

int BpfRegistry::map_delete_elem(int fd, const void* key) {
  const auto entry = map_entry(fd);
  if (entry == nullptr) return -EBADF;
  Map& map = *entry->map;
  std::vector<std::uint8_t> k(map.spec().key_size);
  if (!support::read_user(key, k.data(), k.size())) return -EFAULT;
  return map.delete_elem(k.data());
}

int BpfRegistry::map_get_next_key(int fd, const void* key, void* next_key) {
  const auto entry = map_entry(fd);
  if (entry == nullptr) return -EBADF;
  Map& map = *entry->map;
  std::vector<std::uint8_t> k(map.spec().key_size);
  std::vector<std::uint8_t> next(map.spec().key_size);
  if (key != nullptr && !support::read_user(key, k.data(), k.size())) return -EFAULT;
  if (const int rc = map.get_next_key(key != nullptr ? k.data() : nullptr, next.data()); rc != 0) {
    return rc;
  }
  return support::write_user(next_key, next.data(), next.size()) ? 0 : -EFAULT;
}

int BpfRegistry::close(int fd) {
  std::shared_ptr<BpfOverflowHandler> program;
  std::shared_ptr<MapEntry> map;
  {
    std::lock_guard lock(mutex_);
    if (const auto it = programs_.find(fd); it != programs_.end()) {
      program = std::move(it->second);
      programs_.erase(it);
    } else if (const auto m = maps_.find(fd); m != maps_.end()) {
      map = std::move(m->second);
      maps_.erase(m);
    } else {
      return -EBADF;
    }
  }
  ::close(fd);
  return 0;  // the last reference drops here, outside the lock (maps may put events)
}

std::shared_ptr<BpfOverflowHandler> BpfRegistry::program(int fd) {
  std::lock_guard lock(mutex_);
  const auto it = programs_.find(fd);
  return it == programs_.end() ? nullptr : it->second;
}

int BpfRegistry::resolve_handler(int fd, std::shared_ptr<core::OverflowHandler>& out) {
  if (auto handler = program(fd)) {
    out = std::move(handler);
    return 0;
  }
  // bpf_prog_get: no descriptor at all is EBADF; a descriptor of anything else is EINVAL.
  return fcntl(fd, F_GETFD) < 0 ? -EBADF : -EINVAL;
}

}  // namespace userperf::bpf
