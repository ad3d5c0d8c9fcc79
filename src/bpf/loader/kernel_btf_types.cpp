#include "bpf/loader/kernel_btf_types.hpp"

#include <bpf/btf.h>
#include <linux/btf.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <unordered_map>
#include <utility>

namespace userperf::bpf::loader {
namespace {

using Kind = KernelBtfType::Kind;

class Builder {
 public:
  explicit Builder(const ::btf* b) : b_(b) { out_.types.emplace_back(); }  // [0]: void

  // The index of kernel type `id` (modifiers and typedefs resolved) reached after `hops`
  // pointer dereferences; its members are described when a struct is first reached within the
  // limit (a struct first reached deeper and later shallower is described then).
  std::uint32_t add(std::uint32_t id, int hops) {
    id = skip_modifiers(id, nullptr);
    const auto found = index_.find(id);
    if (found != index_.end()) {
      KernelBtfType& t = out_.types[found->second];
      if (t.opaque && hops <= KernelBtfTypes::kMaxPointerHops) pending_.push_back({id, hops});
      return found->second;
    }
    const auto index = static_cast<std::uint32_t>(out_.types.size());
    index_.emplace(id, index);
    out_.types.emplace_back();
    const btf_type* t = btf__type_by_id(b_, id);
    KernelBtfType desc;
    if (id == 0 || t == nullptr) {
      desc.kind = Kind::kVoid;
    } else if (btf_is_int(t) || btf_is_enum(t) || btf_is_enum64(t) || btf_is_float(t)) {
      desc.kind = Kind::kScalar;
      desc.size = t->size;
    } else if (btf_is_ptr(t)) {
      desc.kind = Kind::kPtr;
      desc.size = 8;
      desc.tag = pointee_tag(t->type);
      desc.target = add(t->type, hops + 1);
    } else if (btf_is_array(t)) {
      desc.kind = Kind::kArray;
      const __s64 size = btf__resolve_size(b_, id);
      desc.size = size < 0 ? 0 : static_cast<std::uint32_t>(size);
      desc.nelems = btf_array(t)->nelems;
      desc.target = add(btf_array(t)->type, hops);
    } else if (btf_is_composite(t)) {
      desc.kind = btf_is_struct(t) ? Kind::kStruct : Kind::kUnion;
      desc.size = t->size;
      desc.opaque = true;
      if (hops <= KernelBtfTypes::kMaxPointerHops) pending_.push_back({id, hops});
    } else {
      desc.kind = Kind::kOther;  // a function, a forward declaration
    }
    const char* name = btf__name_by_offset(b_, t ? t->name_off : 0);
    desc.name = name ? name : "";
    out_.types[index] = std::move(desc);
    return index;
  }

  // Describes the members of the structs reached (breadth first, so each gets its least depth).
  void finish() {
    while (!pending_.empty()) {
      const auto [id, hops] = pending_.front();
      pending_.pop_front();
      const std::uint32_t index = index_.at(id);
      if (!out_.types[index].opaque) continue;
      out_.types[index].opaque = false;
      const btf_type* t = btf__type_by_id(b_, id);
      const btf_member* m = btf_members(t);
      std::vector<KernelBtfMember> members;
      for (std::uint16_t i = 0; i < btf_vlen(t); ++i, ++m) {
        KernelBtfMember member;
        const char* name = btf__name_by_offset(b_, m->name_off);
        member.name = name ? name : "";
        member.bit_offset = btf_member_bit_offset(t, i);
        member.bitfield_size = btf_member_bitfield_size(t, i);
        member.type = add(m->type, hops);
        members.push_back(std::move(member));
      }
      out_.types[index].members = std::move(members);
    }
  }

  KernelBtfTypes take() { return std::move(out_); }

 private:
  std::uint32_t skip_modifiers(std::uint32_t id, const btf_type** tag) const {
    for (;;) {
      const btf_type* t = btf__type_by_id(b_, id);
      if (t == nullptr) return 0;
      if (!(btf_is_typedef(t) || btf_is_const(t) || btf_is_volatile(t) || btf_is_restrict(t) ||
            btf_is_type_tag(t))) {
        return id;
      }
      if (tag != nullptr && btf_is_type_tag(t) && *tag == nullptr) *tag = t;
      id = t->type;
    }
  }

  KernelBtfType::Tag pointee_tag(std::uint32_t id) const {
    const btf_type* tag = nullptr;
    skip_modifiers(id, &tag);
    if (tag == nullptr) return KernelBtfType::Tag::kNone;
    const char* v = btf__name_by_offset(b_, tag->name_off);
    if (v == nullptr) return KernelBtfType::Tag::kNone;
    if (std::strcmp(v, "user") == 0) return KernelBtfType::Tag::kUser;
    if (std::strcmp(v, "percpu") == 0) return KernelBtfType::Tag::kPercpu;
    if (std::strcmp(v, "rcu") == 0) return KernelBtfType::Tag::kRcu;
    return KernelBtfType::Tag::kNone;
  }

  const ::btf* b_;
  KernelBtfTypes out_;
  std::unordered_map<std::uint32_t, std::uint32_t> index_;
  std::deque<std::pair<std::uint32_t, int>> pending_;
};

}  // namespace

Expected<KernelBtfTypes> read_kernel_btf_types(const BtfHandle& kernel) {
  const ::btf* b = kernel.get();
  const __s32 task = btf__find_by_name_kind(b, "task_struct", BTF_KIND_STRUCT);
  if (task <= 0) return make_error(EINVAL, "the kernel's BTF has no struct task_struct");
  Builder builder(b);
  const std::uint32_t task_index = builder.add(static_cast<std::uint32_t>(task), 0);
  const __s32 vma = btf__find_by_name_kind(b, "vm_area_struct", BTF_KIND_STRUCT);
  const std::uint32_t vma_index = vma > 0 ? builder.add(static_cast<std::uint32_t>(vma), 0) : 0;
  builder.finish();
  KernelBtfTypes types = builder.take();
  types.task_struct = task_index;
  types.vm_area_struct = vma_index;
  return types;
}

}  // namespace userperf::bpf::loader
