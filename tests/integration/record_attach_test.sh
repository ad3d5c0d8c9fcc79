#!/usr/bin/env bash
# `userperf record -p PID` / `-t TID` on processes userperf did not start: the agent is loaded with
# ptrace, the threads are recorded, the process is detached, and its output and exit status are
# those of a run nobody attached to (workloads/attach_target.c prints a line that any changed
# register, signal mask, stack byte or system call result would change).
# Usage: record_attach_test.sh SCENARIO BIN_DIR
#   output    attach with -g until a thread started after the attach has run 0.5 s: output and status unchanged, the threads' functions in
#             perf report with their callers (a thread started after the attach too), the
#             process's descriptors as before
#   twice     two attaches one after the other; a second attach while the first records is refused
#   races     processes that exit or exec while being attached to: a clear message or a recording,
#             never a changed output, a hang or a killed program
#   refusals  no such process, a static program, another user's process, --off-cpu, a bad -t
#   sigint    ^C ends a recording without COMMAND; -t records only the given thread
#   other-user  root records a process of user nobody (the agent gets the socket's directory)
set -uo pipefail
scenario=$1
bin=$2
userperf=$bin/userperf
target=$bin/workload_attach_target
# shellcheck source=tests/integration/test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"

if [[ $(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo 0) -ge 1 && $EUID -ne 0 ]]; then
  echo "SKIP: kernel.yama.ptrace_scope forbids attaching to a non-child as an unprivileged user"
  exit 77
fi

# reference ROUNDS: the target's line and status with nobody attached.
reference() {
  "$target" "$1" >"$dir/ref.out"
  echo $? >"$dir/ref.rc"
}
# start ROUNDS: the target in the background; $pid, its output in $dir/run.out, status in run.rc.
start() {
  ("$target" "$1" >"$dir/run.out"; echo $? >"$dir/run.rc") &
  runner=$!
  pid=""
  for _ in $(seq 1 200); do
    pid=$(pgrep -n -P "$runner" -f workload_attach_target) && break
    sleep 0.01
  done
  # A short run may be over before it is seen: then there is nothing to attach to.
  [[ -n $pid ]] || { kill -0 "$runner" 2>/dev/null && fail "the target did not start"; pid=999999; }
}
# threads_state PID: each thread's "tid state wchan comm", and the process's tracer and signals.
threads_state() {
  local state="" task
  for task in /proc/"$1"/task/*; do
    state+="$(basename "$task") $(awk '{ print $3 }' "$task/stat" 2>/dev/null) $(cat "$task/wchan" 2>/dev/null) $(cat "$task/comm" 2>/dev/null); "
  done
  echo "$state$(grep -E '^(TracerPid|SigBlk|SigPnd|ShdPnd):' "/proc/$1/status" 2>/dev/null | tr -s '\t\n' '  ')"
}
# ends_within PID SECONDS: whether PID (a child of this shell) ends within SECONDS.
ends_within() {
  local tenths=0
  while kill -0 "$1" 2>/dev/null && ((tenths < $2 * 10)); do
    sleep 0.1
    tenths=$((tenths + 1))
  done
  ! kill -0 "$1" 2>/dev/null
}
# unchanged NAME [eintr]: waits for the target; its output and status must be the reference's.
# With "eintr" the count of EINTRs is left out: at -F above HZ the clock signal also comes from the
# ticker thread, and a thread that enters nanosleep between the ticker's look and the signal gets
# EINTR (docs/record.md, "Sampling"); every other recording here samples at -F 99, below HZ, where
# only the thread's own CPU-time timer signals it, which a sleeping thread never fires.
# A target still running after 60 s (its runs take seconds) fails with what its threads are
# doing, instead of the test's timeout with nothing said (once in a ctest run of 8 tests).
unchanged() {
  if ! ends_within "$runner" 60; then
    fail "$1: the target (pid $pid) still runs after 60 s: $(threads_state "$pid")"
    kill -KILL "$pid" 2>/dev/null
  fi
  wait "$runner"
  if [[ ${2:-} == eintr ]]; then
    sed -i 's/ eintr=[0-9]*//' "$dir/ref.out" "$dir/run.out"
  fi
  cmp -s "$dir/ref.out" "$dir/run.out" ||
    fail "$1: output changed: '$(cat "$dir/run.out")' vs '$(cat "$dir/ref.out")'"
  cmp -s "$dir/ref.rc" "$dir/run.rc" ||
    fail "$1: exit status $(cat "$dir/run.rc"), expected $(cat "$dir/ref.rc")"
}
# share FILE SYMBOL: SYMBOL's percentage in perf report --sort sym (0 when absent).
share() {
  perf report -i "$1" --stdio --no-children --sort sym 2>/dev/null |
    awk -v s="$2" '$NF == s { sub("%", "", $1); print int($1); found = 1 } END { if (!found) print 0 }'
}

case $scenario in
  output)
    reference 1200
    start 1200
    sleep 0.3
    ls "/proc/$pid/fd" | sort >"$dir/fds.before"
    # Until the late thread (started halfway, after the attach) has run half a second: its start
    # depends on the machine's load, so the recording waits for it, then ends with SIGINT.
    # CPU time (clock ticks) of the main thread and the worker (the first thread it started).
    worker_tid=$(ls "/proc/$pid/task" | sort -n | awk -v p="$pid" '$1 > p' | head -1)
    ticks() { awk '{ print $14 + $15 }' "/proc/$pid/task/$1/stat" 2>/dev/null || echo 0; }
    main_ticks=$(ticks "$pid") worker_ticks=$(ticks "$worker_tid")
    timeout 60 "$userperf" record -g -p "$pid" -o "$dir/a.data" 2>"$dir/err" &
    recorder=$!
    for _ in $(seq 1 300); do
      grep -qx late /proc/"$pid"/task/*/comm 2>/dev/null && break
      sleep 0.05
    done
    sleep 0.5
    kill -INT "$recorder"
    # The recorder detaches and ends within seconds; one that does not is named with what its
    # threads and the target's are doing (the test once ran into ctest's timeout, nothing said).
    if ! ends_within "$recorder" 60; then
      fail "the recorder did not end within 60 s of SIGINT: its threads $(threads_state "$(pgrep -n -P "$recorder" || echo "$recorder")"), the target's $(threads_state "$pid")"
      pkill -KILL -P "$recorder"
      kill -KILL "$recorder" 2>/dev/null
    fi
    wait "$recorder"
    rc=$?
    main_ticks=$(($(ticks "$pid") - main_ticks)) worker_ticks=$(($(ticks "$worker_tid") - worker_ticks))
    late_tid=$(grep -lx late /proc/"$pid"/task/*/comm 2>/dev/null | head -1 | cut -d/ -f5)
    late_ticks=$(ticks "${late_tid:-0}")
    [[ $rc -eq 0 ]] || fail "record -p: exit $rc: $(cat "$dir/err")"
    # No descriptor left behind (the program may have closed some of its own meanwhile).
    ls "/proc/$pid/fd" 2>/dev/null | sort >"$dir/fds.after"
    left=$(comm -13 "$dir/fds.before" "$dir/fds.after" | tr '\n' ' ')
    [[ -z $left || ! -d /proc/$pid ]] || fail "descriptors left after the detach: $left"
    unchanged "record -p" eintr
    main=$(share "$dir/a.data" main_spin)
    worker=$(share "$dir/a.data" worker_spin)
    # Both spin throughout; how the CPU is split between them depends on the machine's load, so
    # the samples' split is held to the kernel's accounting of their CPU time meanwhile.
    ((main > 0 && worker > 0 && main_ticks + worker_ticks > 0)) ||
      fail "shares: main_spin $main%, worker_spin $worker% (CPU ticks $main_ticks, $worker_ticks)"
    sampled=$((100 * main / (main + worker))) accounted=$((100 * main_ticks / (main_ticks + worker_ticks)))
    ((sampled - accounted <= 12 && accounted - sampled <= 12)) ||
      fail "main_spin has $sampled% of the two threads' samples but $accounted% of their CPU time"
    # The late thread started after the attach: followed (perf -p's inherit).
    late=$(share "$dir/a.data" late_spin)
    all_ticks=$((main_ticks + worker_ticks + late_ticks))
    late_accounted=$((100 * late_ticks / (all_ticks > 0 ? all_ticks : 1)))
    grep -qw late_spin < <(perf report -i "$dir/a.data" --stdio --no-children --sort sym 2>/dev/null) &&
      ((late - late_accounted <= 8 && late_accounted - late <= 8)) ||
      fail "the thread started after the attach: late_spin $late% of samples, $late_accounted% of CPU time"
    # The worker's frames walk to start_thread: its stack was told to the agent.
    perf report -i "$dir/a.data" --stdio --no-children --sort sym 2>/dev/null >"$dir/report"
    grep -q "start_thread" "$dir/report" || fail "no caller of worker_spin: $(head -30 "$dir/report")"
    samples=$(perf report -i "$dir/a.data" --stdio 2>/dev/null | sed -n 's/^# Samples: \([0-9K]*\).*/\1/p')
    grep -q "worker_spin" < <("$userperf" report -i "$dir/a.data" --stdio --sort sym 2>/dev/null) ||
      fail "userperf report lacks worker_spin"
    echo "ok: output unchanged, main_spin $main%, worker_spin $worker% (main's part: $sampled% of samples, $accounted% of CPU time), late_spin $late% ($late_accounted% of CPU time), $samples samples"
    ;;
  twice)
    reference 2500
    start 2500
    sleep 0.2
    for round in 1 2; do
      timeout 60 "$userperf" record -q -F 99 -p "$pid" -o "$dir/r$round.data" -- sleep 0.4 2>"$dir/err"
      rc=$?
      [[ $rc -eq 0 ]] || fail "attach $round: exit $rc: $(cat "$dir/err")"
      (($(share "$dir/r$round.data" main_spin) > 0)) || fail "attach $round recorded no main_spin"
    done
    timeout 60 "$userperf" record -q -F 99 -p "$pid" -o "$dir/first.data" -- sleep 1.5 2>"$dir/first.err" &
    first=$!
    sleep 0.6
    timeout 60 "$userperf" record -q -p "$pid" -o "$dir/second.data" -- sleep 0.2 2>"$dir/err"
    rc=$?
    [[ $rc -ne 0 ]] && grep -q "being recorded already" "$dir/err" ||
      fail "a second attach while recorded: exit $rc: $(cat "$dir/err")"
    wait "$first" || fail "the first of two concurrent attaches: $(cat "$dir/first.err")"
    (($(share "$dir/first.data" main_spin) > 0)) || fail "the first concurrent attach recorded nothing"
    unchanged "three attaches"
    echo "ok: attached twice in a row; a concurrent attach refused ($(head -1 "$dir/err"))"
    ;;
  races)
    known='no process|has exited|is exiting|ran a new program|exited or ran a new program|is starting'
    reference 2
    for i in $(seq 1 10); do
      start 2
      timeout 60 "$userperf" record -q -F 99 -p "$pid" -o "$dir/x.data" -- sleep 0.2 2>"$dir/err"
      rc=$?
      [[ $rc -eq 0 ]] || { [[ $rc -eq 255 ]] && grep -Eq "$known" "$dir/err"; } ||
        fail "exiting target $i: exit $rc: $(cat "$dir/err")"
      unchanged "exiting target $i"
    done
    reference 20
    for i in $(seq 1 10); do
      # A shell that computes a moment, then execs the target.
      (sh -c "i=0; while [ \$i -lt 20000 ]; do i=\$((i+1)); done; exec $target 20" >"$dir/run.out"
        echo $? >"$dir/run.rc") &
      runner=$!
      sleep 0.0$((i % 8))
      pid=$(pgrep -n -P "$runner") || pid=999999
      timeout 60 "$userperf" record -q -F 99 -p "$pid" -o "$dir/x.data" -- sleep 0.3 2>"$dir/err"
      rc=$?
      [[ $rc -eq 0 ]] || { [[ $rc -eq 255 ]] && grep -Eq "$known" "$dir/err"; } ||
        fail "exec'ing target $i: exit $rc: $(cat "$dir/err")"
      unchanged "exec'ing target $i"
    done
    echo "ok: 20 attaches raced an exit or an exec; every target's output and status unchanged"
    ;;
  refusals)
    expect() { # NAME PATTERN ARGS...
      local name=$1 pattern=$2
      shift 2
      timeout 60 "$@" >"$dir/out" 2>"$dir/err"
      local rc=$?
      [[ $rc -ne 0 ]] && grep -q -- "$pattern" "$dir/err" ||
        fail "$name: exit $rc, stderr: $(cat "$dir/err")"
      echo "ok: $name: $(head -1 "$dir/err")"
    }
    expect "no such process" "no process 999999" "$userperf" record -p 999999 -o "$dir/x.data"
    expect "no such thread" "no thread 999999" "$userperf" record -t 999999 -o "$dir/x.data"
    "$bin/workload_static" 100 >/dev/null &
    static=$!
    expect "static program" "statically linked" "$userperf" record -p "$static" -o "$dir/x.data"
    kill "$static"
    start 600
    expect "--off-cpu" "not available with -p" "$userperf" record --off-cpu -p "$pid" -o "$dir/x.data"
    if [[ $EUID -eq 0 ]] && command -v setpriv >/dev/null; then
      chmod 777 "$dir"
      expect "another user's process" "belongs to user 0" \
        setpriv --reuid=65534 --regid=65534 --clear-groups "$userperf" record -p "$pid" -o "$dir/y.data"
    else
      echo "skip: another user's process (needs root and setpriv)"
    fi
    reference 600
    unchanged "refused attaches"
    ;;
  sigint)
    reference 2500
    start 2500
    sleep 0.3
    timeout 60 "$userperf" record -q -F 99 -p "$pid" -o "$dir/s.data" 2>"$dir/err" &
    recorder=$!
    sleep 0.8
    kill -INT "$recorder"
    wait "$recorder"
    rc=$?
    [[ $rc -eq 0 ]] || fail "record -p ended by SIGINT: exit $rc: $(cat "$dir/err")"
    (($(share "$dir/s.data" main_spin) > 0)) || fail "SIGINT: nothing recorded"
    # -t: only the worker (the thread with the most CPU time besides the main one).
    worker=$(for t in /proc/"$pid"/task/*; do
      tid=${t##*/}
      [[ $tid == "$pid" ]] || echo "$(awk '{print $14}' "$t/stat") $tid"
    done | sort -n | tail -1 | awk '{print $2}')
    timeout 60 "$userperf" record -q -F 99 -t "$worker" -o "$dir/t.data" -- sleep 0.5 2>"$dir/err" ||
      fail "record -t: $(cat "$dir/err")"
    w=$(share "$dir/t.data" worker_spin)
    ((w >= 90)) || fail "record -t $worker: worker_spin $w%"
    unchanged "SIGINT and -t"
    echo "ok: SIGINT ended the recording; -t recorded the worker alone (worker_spin $w%)"
    ;;
  other-user)
    # Root recording another user's process: its agent gets the socket's directory.
    if [[ $EUID -ne 0 ]] || ! command -v setpriv >/dev/null; then
      echo "SKIP: needs root and setpriv"
      exit 77
    fi
    chmod 755 "$dir"
    cp "$target" "$dir/target"
    chmod 755 "$dir/target"
    setpriv --reuid=65534 --regid=65534 --clear-groups "$dir/target" 2500 >/dev/null &
    runner=$!
    sleep 0.3
    timeout 60 "$userperf" record -q -F 99 -p "$runner" -o "$dir/o.data" -- sleep 0.5 2>"$dir/err"
    rc=$?
    [[ $rc -eq 0 ]] || fail "root attaching to nobody's process: exit $rc: $(cat "$dir/err")"
    (($(share "$dir/o.data" main_spin) > 0)) || fail "nobody's process: nothing recorded"
    kill "$runner" 2>/dev/null
    wait "$runner" 2>/dev/null
    echo "ok: root recorded a process of user nobody"
    ;;
  *)
    echo "unknown scenario $scenario" >&2
    exit 2
    ;;
esac
finish "record -p $scenario: all checks passed"
