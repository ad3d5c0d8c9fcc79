// Loads through BTF-typed pointers (PTR_TO_BTF_ID), as the kernel's check_ptr_to_btf_access and
// btf_struct_access check them against vmlinux BTF (here KernelBtfTypes, from the image): the
// access must fall inside one member; a scalar member gives a scalar, a pointer-to-struct member
// (read whole) a BTF pointer to that struct, whose trust follows the kernel's 6.x rules
// (trusted/RCU fields, __rcu tags, else the plain deprecated PTR_TO_BTF_ID). Stores are refused.
// Also the helpers that hand out or take such pointers (bpf_get_current_task_btf, bpf_find_vma).
#include <cerrno>
#include <cstring>

#include "bpf/verifier/checker.hpp"

namespace userperf::bpf {
namespace {

using Kind = KernelBtfType::Kind;

// Bounds on the walk of a table that came from a decoded image (the kernel's BTF never nests this
// deep; a crafted table could loop).
constexpr int kMaxWalkSteps = 256;

bool is_composite(const KernelBtfType& t) {
  return t.kind == Kind::kStruct || t.kind == Kind::kUnion;
}

// The kernel's BTF_TYPE_SAFE_* lists that matter to pointers a perf_event program walks from its
// task or vma: which fields keep their parent's trust.
struct SafeField {
  const char* owner;
  const char* field;
  std::uint8_t flags;  // kBtfTrusted or kBtfRcu
  bool or_null;
};
constexpr SafeField kSafeFields[] = {
    {"task_struct", "cpus_ptr", kBtfRcu, false},    {"task_struct", "cgroups", kBtfRcu, false},
    {"task_struct", "real_parent", kBtfRcu, false}, {"task_struct", "group_leader", kBtfRcu, false},
    {"mm_struct", "owner", kBtfRcu, true},          {"linux_binprm", "file", kBtfTrusted, false},
    {"file", "f_inode", kBtfTrusted, false},        {"dentry", "d_inode", kBtfTrusted, false},
};

const SafeField* safe_field(const std::string& owner, const std::string& field) {
  for (const SafeField& s : kSafeFields) {
    if (owner == s.owner && field == s.field) return &s;
  }
  return nullptr;
}

}  // namespace

// One step of btf_struct_walk: from `type` at `off`, the member the access falls in.
int Checker::btf_struct_walk(std::uint32_t type, std::uint32_t off, int size, BtfWalkStep& out) {
  const KernelBtfTypes& bt = *options_.kernel_btf;
  const auto usize = static_cast<std::uint32_t>(size);
  for (int steps = 0;; ++steps) {
    if (steps == kMaxWalkSteps) return log_.reject(EINVAL, "kernel struct types nest too deeply");
    const KernelBtfType& t = bt.types[type];
    const char* tname = t.name.c_str();
    if (!is_composite(t)) return log_.reject(EINVAL, "Type '%s' is not a struct", tname);
    if (t.opaque) {
      return log_.reject(EACCES,
                         "struct %s is more than %d pointer dereferences from task_struct or "
                         "vm_area_struct: userperf does not carry its layout",
                         tname, KernelBtfTypes::kMaxPointerHops);
    }
    // Pointers found inside a union of several members are not trusted.
    if (t.kind == Kind::kUnion && t.members.size() != 1) out.flags |= kBtfUntrusted;
    if (off + usize > t.size) {
      return log_.reject(EACCES, "access beyond struct %s at off %u size %u", tname, off, usize);
    }
    bool descend = false;
    for (const KernelBtfMember& m : t.members) {
      std::uint32_t moff = m.bit_offset / 8;
      if (off + usize <= moff) break;  // past the access: a hole
      if (m.bitfield_size != 0) {
        const std::uint32_t end_byte = (m.bit_offset + m.bitfield_size + 7) / 8;
        if (off <= moff && end_byte <= off + usize) {
          out.kind = BtfWalkStep::kScalar;
          return 0;
        }
        continue;  // a partial access may belong to a following member
      }
      if (off < moff) break;  // a hole before this member
      std::uint32_t mtype = m.type;
      const std::uint32_t msize = bt.types[mtype].size;
      const std::uint32_t mtrue_end = moff + msize;
      if (off >= mtrue_end) continue;
      if (bt.types[mtype].kind == Kind::kArray) {
        // A multi-dimensional array is one array of its innermost elements.
        std::uint32_t elem = bt.types[mtype].target;
        for (int depth = 0; bt.types[elem].kind == Kind::kArray; ++depth) {
          if (depth == kMaxWalkSteps)
            return log_.reject(EINVAL, "kernel array types nest too deeply");
          elem = bt.types[elem].target;
        }
        const std::uint32_t elem_size = bt.types[elem].size;
        if (elem_size == 0) continue;
        moff += (off - moff) / elem_size * elem_size;
        mtype = elem;
      }
      const KernelBtfType& mt = bt.types[mtype];
      if (is_composite(mt)) {
        if (off == moff) {
          out.kind = BtfWalkStep::kStruct;
          out.next = mtype;
          return 0;
        }
        off -= moff;
        type = mtype;
        descend = true;
        break;
      }
      if (mt.kind == Kind::kPtr) {
        if (mt.size != usize || off != moff) {
          return log_.reject(EACCES,
                             "cannot access ptr member %s with moff %u in struct %s with off %u "
                             "size %u",
                             m.name.c_str(), moff, tname, off, usize);
        }
        if (is_composite(bt.types[mt.target])) {
          out.kind = BtfWalkStep::kPtr;
          out.next = mt.target;
          out.owner = type;
          out.field = &m.name;
          if (mt.tag == KernelBtfType::Tag::kUser) out.flags |= kBtfUser;
          if (mt.tag == KernelBtfType::Tag::kPercpu) out.flags |= kBtfPercpu;
          if (mt.tag == KernelBtfType::Tag::kRcu) out.flags |= kBtfRcu;
          return 0;
        }
      }
      // Scalars (and pointers to anything but a struct), which may span an array's elements.
      if (off + usize > mtrue_end) {
        return log_.reject(EACCES,
                           "access beyond the end of member %s (mend:%u) in struct %s with off %u "
                           "size %u",
                           m.name.c_str(), mtrue_end, tname, off, usize);
      }
      out.kind = BtfWalkStep::kScalar;
      return 0;
    }
    if (!descend) {
      return log_.reject(EINVAL, "struct %s doesn't have field at offset %d", tname,
                         static_cast<int>(off));
    }
  }
}

int Checker::check_ptr_to_btf_access(int regno, const RegState& ptr, int off, int size, bool write,
                                     RegState& value) {
  const KernelBtfTypes& bt = *options_.kernel_btf;
  const char* tname = bt.types[ptr.btf_type].name.c_str();
  if (!options_.gpl_compatible) {
    return log_.reject(EINVAL, "Cannot access kernel 'struct %s' from non-GPL compatible program",
                       tname);
  }
  if (off < 0) {
    return log_.reject(EACCES, "R%d is ptr_%s invalid negative access: off=%d", regno, tname, off);
  }
  if (!ptr.var_off.is_const() || ptr.var_off.value != 0) {
    return log_.reject(EACCES, "R%d is ptr_%s invalid variable offset: off=%d, var_off=%s", regno,
                       tname, off, ptr.var_off.str().c_str());
  }
  if (ptr.btf_flags & kBtfUser) {
    return log_.reject(EACCES, "R%d is ptr_%s access user memory: off=%d", regno, tname, off);
  }
  if (ptr.btf_flags & kBtfPercpu) {
    return log_.reject(EACCES, "R%d is ptr_%s access percpu memory: off=%d", regno, tname, off);
  }
  if (write) return log_.reject(EACCES, "only read is supported");
  // btf_struct_access: walk until a scalar or a pointer; a nested struct at the very offset is
  // walked on from its start.
  std::uint32_t type = ptr.btf_type;
  auto at = static_cast<std::uint32_t>(off);
  BtfWalkStep step;
  for (int steps = 0;; ++steps) {
    if (steps == kMaxWalkSteps) return log_.reject(EINVAL, "kernel struct types nest too deeply");
    if (int err = btf_struct_walk(type, at, size, step)) return err;
    if (step.kind != BtfWalkStep::kStruct) break;
    type = step.next;
    at = 0;
  }
  if (step.kind == BtfWalkStep::kScalar) {
    value = make_unknown_scalar();
    return 0;
  }
  // The loaded pointer's trust (check_ptr_to_btf_access after btf_struct_access). A perf_event
  // program is not sleepable: it is always in an RCU read section.
  std::uint8_t flags = step.flags;
  bool maybe_null = false;
  const bool parent_untrusted = (ptr.btf_flags & kBtfUntrusted) != 0;
  const bool parent_trusted = (ptr.btf_flags & (kBtfTrusted | kBtfRcu)) != 0 && !parent_untrusted;
  const auto clear_trust = [&] { flags &= static_cast<std::uint8_t>(~(kBtfTrusted | kBtfRcu)); };
  if (parent_untrusted) {
    flags = kBtfUntrusted;
  } else if (parent_trusted) {
    const SafeField* safe = safe_field(bt.types[step.owner].name, *step.field);
    if (safe != nullptr && safe->flags == kBtfTrusted) {
      flags |= kBtfTrusted;
      maybe_null = safe->or_null;
    } else if (safe != nullptr) {
      flags |= kBtfRcu;
      maybe_null = safe->or_null;
      if (safe->or_null) flags &= static_cast<std::uint8_t>(~kBtfUntrusted);
    } else if (flags & kBtfRcu) {
      maybe_null = true;  // an __rcu pointer may be NULL
    } else if ((flags & (kBtfPercpu | kBtfUser)) == 0) {
      clear_trust();
    }
  } else {
    clear_trust();
  }
  value = make_pointer(RegType::kPtrToBtfId);
  value.btf_type = step.next;
  value.btf_flags = flags;
  if (maybe_null) {
    value.maybe_null = true;
    value.id = ++id_gen_;
  }
  return 0;
}

// bpf_get_current_task_btf's result: the current task, trusted and never NULL.
RegState Checker::current_task_btf() const {
  RegState task = make_pointer(RegType::kPtrToBtfId);
  task.btf_type = options_.kernel_btf->task_struct;
  task.btf_flags = kBtfTrusted;
  return task;
}

// ARG_PTR_TO_BTF_ID of a task_struct (bpf_find_vma's task): a plain, trusted or RCU pointer (not
// untrusted, not maybe NULL) to exactly a task_struct at offset 0.
int Checker::check_task_arg(int regno) {
  const RegState& r = reg(regno);
  const bool ok = r.type == RegType::kPtrToBtfId && !r.maybe_null &&
                  (r.btf_flags & (kBtfUntrusted | kBtfUser | kBtfPercpu)) == 0;
  if (!ok) {
    return log_.reject(EACCES, "R%d type=%s expected=ptr_, trusted_ptr_, rcu_ptr_", regno,
                       reg_type_name(r));
  }
  const KernelBtfTypes& bt = *options_.kernel_btf;
  if (r.btf_type != bt.task_struct || r.off != 0) {
    return log_.reject(EACCES, "R%d is of type %s but %s is expected", regno,
                       bt.types[r.btf_type].name.c_str(), "task_struct");
  }
  if (!r.var_off.is_const() || r.var_off.value != 0) {
    return log_.reject(EACCES, "R%d is ptr_%s invalid variable offset: off=%d, var_off=%s", regno,
                       bt.types[r.btf_type].name.c_str(), r.off, r.var_off.str().c_str());
  }
  return 0;
}

}  // namespace userperf::bpf
