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

TARGETS = {'ring_reader': RING_SEEDS, 'perf_event_attr': ATTR_SEEDS}

if __name__ == '__main__':
    target, out = sys.argv[1], sys.argv[2]
    for name, data in TARGETS[target].items():
        with open(f'{out}/{name}', 'wb') as f:
            f.write(data)
