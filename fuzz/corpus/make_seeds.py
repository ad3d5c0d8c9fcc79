#!/usr/bin/env python3
"""Writes the hand-made seeds of the script-driven fuzz targets (fuzz/byte_script.hpp reads them
front to back, little-endian). Usage: make_seeds.py TARGET OUT_DIR. The scenarios are those of the
unit tests named next to each seed."""
import struct
import sys


def u8(v): return struct.pack('<B', v & 0xff)
def u16(v): return struct.pack('<H', v & 0xffff)
def u32(v): return struct.pack('<I', v & 0xffffffff)
def u64(v): return struct.pack('<Q', v & 0xffffffffffffffff)


# ---- ring_reader (fuzz/ring_reader_fuzzer.cpp): ops of LLVMFuzzerTestOneInput's switch.
def ring_record(rtype, units, backward=False, publish=True, fill=0x1122334455667788, size=None):
    out = u8(1) + u8(1 if backward else 0) + u8(rtype) + u16(0) + u8(units - 1)
    out += u8(0) + u16(size) if size is not None else u8(1)
    return out + u64(fill) + u8(1 if publish else 0)


def ring_reader(kind, previous_from_producer=False):
    # kind 0 forward, 1 forward overwrite, 2 backward; previous head 0 or the producer's head.
    return u8(8) + u8(kind) + (u8(0) + u8(1) if previous_from_producer else u8(1))


BEGIN, COMMIT, DISCARD = u8(9), u8(13), u8(14)
def NEXT(n): return u8(11) + u8(n - 1)
def PASS(drain, stop=64): return u8(15) + u8(1 if drain else 0) + u8(stop)
def HEAD_ARBITRARY(v): return u8(4) + u8(1) + u64(v)
def TAIL_ARBITRARY(v): return u8(5) + u8(1) + u64(v)
def JUMP(wraps, units): return u8(6) + u8(wraps) + u8(units)
def DATA_SIZE_POW2(shift): return u8(7) + u8(0) + u8(0) + u8(shift)


RING_SEEDS = {
    # reader_test ForwardReadsRecordsInOrder: three records, one pass, commit.
    'forward_three': u8(0) + ring_reader(0) + ring_record(9, 3) + ring_record(9, 4) +
                     ring_record(2, 3) + BEGIN + NEXT(4) + COMMIT,
    # reader_test WrappedRecordIsContiguous: records across the end of a 64-byte ring, drained twice.
    'forward_wrap': u8(0) + DATA_SIZE_POW2(6) + ring_reader(0) + ring_record(9, 5) + PASS(True) +
                    ring_record(9, 5) + PASS(True) + ring_record(9, 6) + PASS(True),
    # reader_test LostRecordsAreCounted: PERF_RECORD_LOST {id, lost}.
    'forward_lost': u8(0) + ring_reader(0) + ring_record(2, 3, fill=5) + ring_record(2, 3, fill=7) +
                    PASS(True),
    # reader_test BadSizeStops: a size not a multiple of 8, then discard.
    'forward_bad_size': u8(0) + ring_reader(0) + ring_record(9, 3, size=13) + BEGIN + NEXT(2) +
                        DISCARD + COMMIT,
    # reader_test HeadTooFarAhead: data_head more than data_size past data_tail.
    'forward_bad_head': u8(0) + ring_reader(0) + HEAD_ARBITRARY(1 << 20) + BEGIN + NEXT(1),
    # reader_test OverwriteOverrun: forward overwrite ring wrapped past the previous head.
    'overwrite_overrun': u8(0) + DATA_SIZE_POW2(7) + ring_reader(1) + ring_record(9, 4) +
                         PASS(False) + COMMIT + ring_record(9, 8) + ring_record(9, 8) +
                         ring_record(9, 8) + BEGIN + DISCARD + COMMIT + ring_record(9, 2) + PASS(True),
    # reader_test BackwardNewestFirst and BackwardWrapped: write_backward records, a wrapped pass.
    'backward': u8(0) + DATA_SIZE_POW2(7) + ring_reader(2) + ring_record(9, 3, backward=True) +
                ring_record(9, 4, backward=True) + PASS(False) + COMMIT +
                ring_record(9, 6, backward=True) + ring_record(9, 6, backward=True) +
                ring_record(9, 6, backward=True) + BEGIN + NEXT(8) + COMMIT,
    # Producer jumping whole rings ahead with a stale tail.
    'forward_jump': u8(1) + ring_reader(0) + JUMP(3, 5) + ring_record(9, 3) + TAIL_ARBITRARY(3 * 8192) +
                    PASS(True, 0) + PASS(True),
}


# ---- perf_event_attr (fuzz/perf_event_attr_fuzzer.cpp): 4 control bytes (flags, pid/cpu, limits,
# open through the C API), then the attr's bytes. Attrs of tests/conformance/attr_diff_test.cpp and
# the unit tests of src/abi.
FLAG = {'disabled': 0, 'inherit': 1, 'exclude_kernel': 5, 'exclude_hv': 6, 'mmap': 8, 'comm': 9,
        'freq': 10, 'enable_on_exec': 12, 'task': 13, 'watermark': 14, 'precise_ip': 15,
        'sample_id_all': 18, 'mmap2': 23, 'use_clockid': 25, 'context_switch': 26,
        'write_backward': 27, 'inherit_thread': 35, 'remove_on_exec': 36, 'sigtrap': 37}


def attr(config=0, period=4000, sample_type=0, read_format=0, flags=(), size=128, type_=1,
         regs_user=0, stack_user=0, clockid=0, branch=0, max_stack=0, aux_sample=0, tail=b''):
    word = 0
    for f in flags:
        word |= 1 << FLAG[f]
    b = u32(type_) + u32(size) + u64(config) + u64(period) + u64(sample_type) + u64(read_format)
    b += u64(word) + u32(1) + u32(0) + u64(0) + u64(0) + u64(branch) + u64(regs_user)
    b += u32(stack_user) + struct.pack('<i', clockid) + u64(0) + u32(0) + u16(max_stack) + u16(0)
    b += u32(aux_sample) + u32(0) + u64(0)
    return b + tail


def attr_case(a, flags=0, pid_cpu=0, limits=0, api=1):
    return u8(flags) + u8(pid_cpu) + u8(limits) + u8(api) + a


IP, TID, TIME, ADDR, READ, CALLCHAIN, ID, CPU, PERIOD, STREAM_ID, RAW = (1 << i for i in range(11))
BRANCH_STACK, REGS_USER, STACK_USER = 1 << 11, 1 << 12, 1 << 13
ATTR_SEEDS = {
    'cpu_clock_sampling': attr_case(attr(0, 100000, IP | TID | TIME | PERIOD,
                                         flags=('disabled', 'exclude_kernel', 'sample_id_all'))),
    'task_clock_freq': attr_case(attr(1, 1000, IP | TID | TIME | CALLCHAIN | CPU | ID,
                                      flags=('disabled', 'freq', 'exclude_kernel', 'inherit'))),
    'size0_ver0': attr_case(attr(0, size=0, flags=('disabled', 'exclude_kernel'))[:64]),
    'size136_zero_tail': attr_case(attr(9, size=136, flags=('disabled', 'mmap', 'comm', 'mmap2',
                                                            'task', 'exclude_kernel'),
                                        tail=bytes(8))),
    'size136_config3': attr_case(attr(0, size=136, tail=u64(1))),
    'size_too_small': attr_case(attr(0, size=48)),
    'size_past_mapping': attr_case(attr(0, size=256)),
    'sigtrap': attr_case(attr(0, 10000, IP, flags=('disabled', 'exclude_kernel', 'sigtrap',
                                                   'remove_on_exec'))),
    'regs_stack_user': attr_case(attr(0, 10000, IP | REGS_USER | STACK_USER, regs_user=0xff0fff,
                                      stack_user=8192, flags=('disabled', 'exclude_kernel'))),
    'branch_stack_software': attr_case(attr(0, 10000, IP | BRANCH_STACK, branch=1,
                                            flags=('disabled', 'exclude_kernel'))),
    'read_group': attr_case(attr(1, 0, 0, read_format=0xf, flags=('disabled', 'exclude_kernel'))),
    'clockid_monotonic_raw': attr_case(attr(0, 10000, TIME, clockid=4,
                                            flags=('disabled', 'exclude_kernel', 'use_clockid'))),
    'cpu_wide_cgroup': attr_case(attr(0, 10000, IP), flags=0x4, pid_cpu=0x1 | (1 << 2)),
    'bad_flags_paranoid': attr_case(attr(3, 1, flags=('disabled',)), flags=0x10, limits=0x6),
    'write_backward_watermark': attr_case(attr(10, 1, RAW, flags=('disabled', 'exclude_kernel',
                                                                  'write_backward', 'watermark'))),
}


# ---- agent_protocol (fuzz/agent_protocol_fuzzer.cpp): a config byte (0 cpu-clock, 1 cpu-clock +
# fp callchains + loop:tick, 2 task-clock + dwarf), then ops. What the agent of
# src/record/agent does in tests/integration's recordings: Hello, ThreadStart with its ring,
# records in the ring, Comm, EventCounts, ThreadExit, ProcessExit.
CONNECT, PUMP = u8(0), u8(5)
PID = 0  # fake pid index: the recorder sees 4194304 + PID


def hello(client=0, pid=PID, ppid=1, parent=None, inherits=0, version=None):
    out = u8(1) + u8(client)
    out += u8(1) + u32(version) if version is not None else u8(0)
    out += u8(pid) + u8(ppid)
    out += u8(1) + u8(parent) if parent is not None else u8(0)
    return out + u32(1000) + u8(inherits) + u8(0)


def thread_start(client=0, tid=PID, events=((0, 1),), pages=0, shape=0, full=True):
    # events: (config_index, clock) with the connection's own ids.
    out = u8(2) + u8(client) + u8(1) + u8(tid) + u8(0) + u8(0) + u32(2000) + u8(len(events))
    out += u8(1) + u8(34)
    for config_index, clock in events:
        out += u8(config_index) + u8(clock) + u8(0)
    return out + u8(pages) + u8(shape) + u8(1 if full else 0)


def ring_record(ring, rtype, body, id_index=0, publish=True):
    units = (8 + len(body)) // 8
    return u8(3) + u8(ring) + u8(0) + u8(rtype) + u8(units - 1) + u8(id_index) + u8(len(body)) + \
        body + u8(1 if publish else 0)


def cpu_clock_sample(ip, time):
    # IDENTIFIER (filled in), IP, TID, TIME, PERIOD
    return u64(0) + u64(ip) + u32(4194304) + u32(4194304) + u64(time) + u64(1000000)


def fp_sample(ip, time, frames):
    return cpu_clock_sample(ip, time) + u64(len(frames)) + b''.join(u64(f) for f in frames)


def comm_record(name):  # pid, tid, comm[16], sample_id trailer (TID, TIME, IDENTIFIER)
    return u32(4194304) + u32(4194304) + name.ljust(16, b'\0') + u32(4194304) + u32(4194304) + \
        u64(3000) + u64(0)


def lost_record(n):  # id, lost, trailer
    return u64(0) + u64(n) + u32(4194304) + u32(4194304) + u64(3000) + u64(0)


def thread_exit(client=0, tid=PID):
    return u8(7) + u8(client) + u8(1) + u8(tid) + u32(9000)


def comm(client=0, tid=PID, name=b'worker'):
    return u8(8) + u8(client) + u8(1) + u8(tid) + u32(2500) + u8(len(name)) + name


def exec_notice(client=0, target=0, failed=0, path=b'/bin/true'):
    return u8(9) + u8(client) + u8(1) + u8(target) + u8(failed) + u16(len(path)) + path


def tracepoint(client=0, index=1, text=b'name: tick\nID: 1000\nformat:\n'):
    return u8(10) + u8(client) + u8(index) + u16(len(text)) + text + u8(1)


def event_counts(client=0, tid=PID, counts=((5, 0),)):
    out = u8(12) + u8(client) + u8(1) + u8(tid) + u32(8000) + u8(len(counts))
    for i, (count, lost) in enumerate(counts):
        out += u8(1) + u8(1) + u8(i) + u16(count) + u16(lost)
    return out


def process_exit(client=0):
    return u8(13) + u8(client) + u8(1) + u8(0) + u32(9500)


AGENT_SEEDS = {
    # One process, one thread, a few samples, an orderly end.
    'cpu_clock_process': u8(0) + CONNECT + hello() + thread_start() + PUMP +
        ring_record(0, 9, cpu_clock_sample(0x401000, 3000)) +
        ring_record(0, 9, cpu_clock_sample(0x401010, 3100)) + ring_record(0, 3, comm_record(b'main')) +
        comm() + event_counts(counts=((2, 0),)) + thread_exit() + process_exit() + PUMP,
    # Frame-pointer callchains, a tracepoint format, a LOST record, a second thread.
    'fp_tracepoint': u8(1) + CONNECT + hello() + tracepoint() +
        thread_start(events=((0, 1), (1, 0))) + PUMP +
        ring_record(0, 9, fp_sample(0x401000, 3000, [0x401000, 0x402000])) +
        ring_record(0, 2, lost_record(3)) + thread_start(tid=1, events=((0, 2), (1, 0))) + PUMP +
        ring_record(1, 9, fp_sample(0x401000, 3000, [0x401000])) + thread_exit(tid=1) +
        process_exit() + PUMP,
    # A fork child that inherits, an exec notice, an unsealed ring, a connection that just closes.
    'fork_exec': u8(0) + CONNECT + hello() + thread_start() + PUMP + CONNECT +
        hello(client=1, pid=2, ppid=PID, parent=PID, inherits=1) + exec_notice(target=2) +
        thread_start(client=1, tid=2, shape=2) + PUMP + ring_record(0, 9, cpu_clock_sample(1, 2)) +
        u8(6) + u8(0) + PUMP,
    # A refused Hello (old protocol version), a message before Hello, a truncated ThreadStart.
    'refusals': u8(0) + CONNECT + hello(version=2) + CONNECT + thread_exit(client=1) + CONNECT +
        hello(client=2) + thread_start(client=2, full=False) + PUMP,
    # DWARF samples (no registers: ABI_NONE, an empty stack copy) on a wrapping ring.
    'dwarf_wrap': u8(2) + CONNECT + hello() + thread_start(pages=0) + PUMP +
        b''.join(ring_record(0, 9, fp_sample(0x401000 + i, 3000 + i, []) + u64(0) + u64(0)) for i in range(4)) +
        process_exit() + PUMP,
}


# ---- tracepoint_format (fuzz/tracepoint_format_fuzzer.cpp): ops 0 make a descriptor, 1 register,
# 2 unregister, 3 check (then the index of the descriptor). The descriptors of
# tests/unit/pmu's tracepoint tests and examples/ (myapp:request with id, path, status).
POOL = {'a': 0, 'b': 1, 'myapp': 2, 'request': 3, 'id': 4, 'path': 5, '_x9': 6, 'Z': 7}
U8_, U16_, U32_, U64_, S8_, S16_, S32_, S64_, STRING_, BYTES_ = range(1, 11)


def tp_text(t):
    if t in POOL:
        return u8(1) + u8(POOL[t])
    return u8(0) + u8(len(t)) + t.encode()


def descriptor(provider, name, fields, version_ok=True):
    out = u8(0) + (u8(1) if version_ok else u8(0) + u32(2)) + tp_text(provider) + u8(1)
    out += tp_text(name) + u8(len(fields))
    for fname, kind in fields:
        out += tp_text(fname) + u8(kind)
    return out + (u8(1) if fields else b'')


def REGISTER(i): return u8(1) + u8(i)
def UNREGISTER(i): return u8(2) + u8(i)
def CHECK(i): return u8(3) + u8(i)


REQUEST = [('id', U64_), ('path', STRING_), ('status', S32_)]
TP_SEEDS = {
    'request': descriptor('myapp', 'request', REQUEST) + CHECK(0) + REGISTER(0) + UNREGISTER(0),
    # Two translation units' copies of one tracepoint, and a third with other fields (EEXIST).
    'same_name_conflict': descriptor('myapp', 'request', REQUEST) +
        descriptor('myapp', 'request', REQUEST) + descriptor('myapp', 'request', [('id', U32_)]) +
        REGISTER(0) + REGISTER(1) + REGISTER(2) + UNREGISTER(0) + UNREGISTER(1) + REGISTER(2),
    # Every kind, padding between fields, a byte array.
    'all_kinds': descriptor('loop', 'tick', [('u8f', U8_), ('u64f', U64_), ('s16f', S16_),
                                             ('s8f', S8_), ('u32f', U32_), ('bytes', BYTES_),
                                             ('s64f', S64_), ('u16f', U16_), ('s32f', S32_),
                                             ('str', STRING_)]) + REGISTER(0),
    # Refusals: bad ABI version, a name with a dash, a duplicate field, too long a provider.
    'refusals': descriptor('myapp', 'request', REQUEST, version_ok=False) +
        descriptor('my-app', 'request', []) + descriptor('a', 'b', [('id', U8_), ('id', U8_)]) +
        descriptor('p' * 64, 'b', []) + CHECK(0) + CHECK(1) + CHECK(2) + CHECK(3) + REGISTER(1),
}

TARGETS = {'ring_reader': RING_SEEDS, 'perf_event_attr': ATTR_SEEDS, 'agent_protocol': AGENT_SEEDS,
           'tracepoint_format': TP_SEEDS}

if __name__ == '__main__':
    target, out = sys.argv[1], sys.argv[2]
    for name, data in TARGETS[target].items():
        with open(f'{out}/{name}', 'wb') as f:
            f.write(data)
