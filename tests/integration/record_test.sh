#!/usr/bin/env bash
# `userperf record` end to end, one scenario per run (each is its own ctest entry).
# Usage: record_test.sh SCENARIO BIN_DIR PLUGIN_SO
#   BIN_DIR holds userperf, hotspots, workload_hotspots_nofp, workload_family, workload_dlopen_host,
#   workload_traced, workload_logged, workload_sigcount, workload_exec_variants, workload_sigmask,
#   workload_static, workload_closer, workload_tp_loop, workload_ring_scribble, workload_many_tasks
#   (the build's bin/; the agent is found by userperf itself in BIN_DIR/../lib).
# Every file a scenario writes must be read by perf report and perf script (Debian linux-perf)
# with exit 0 and nothing on stderr.
set -uo pipefail
scenario=$1
bin=$(cd "$2" && pwd) || exit 1
plugin=${3:-}
userperf=$bin/userperf
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() {
  echo "FAIL [$scenario]: $*" >&2
  exit 1
}

# perf must read FILE without complaint. perf warns on stderr when more than 5% of the samples
# were lost ("Processed N samples and lost P%!"): a count the recording wrote on purpose (a short
# thread's last periods, a damaged ring; scenarios that care check it), so that warning alone is
# allowed; anything else on stderr fails.
perf_reads() {
  local file=$1 tool
  for tool in report script; do
    perf $tool -i "$file" $([[ $tool == report ]] && echo --stdio) >"$dir/$tool.txt" 2>"$dir/$tool.err" ||
      fail "perf $tool exited $? on $file: $(head -5 "$dir/$tool.err")"
    grep -v '^Warning:$\|^Processed [0-9]* samples and lost [0-9.]*%!$\|^$' "$dir/$tool.err" |
      grep -q . && fail "perf $tool wrote to stderr on $file: $(head -5 "$dir/$tool.err")"
  done
  return 0
}

# Self shares (percent) of the demo's three functions in FILE, as perf report computes them:
# prints "hot warm cool".
perf_shares() {
  perf report -i "$1" --stdio --no-children --sort sym -g none -q 2>/dev/null |
    awk '{ pct[$NF] = $1 + 0 } END { printf "%.1f %.1f %.1f\n", pct["hot_parse"], pct["warm_transform"], pct["cool_checksum"] }'
}

# Fails unless shares "hot warm cool" are within 5 points of 50/30/20.
check_shares() {
  local label=$1 hot warm cool
  read -r hot warm cool <<<"$2"
  echo "$label shares: hot_parse $hot% warm_transform $warm% cool_checksum $cool% (expected 50/30/20)"
  awk -v h="$hot" -v w="$warm" -v c="$cool" 'BEGIN {
    d1 = h - 50; d2 = w - 30; d3 = c - 20
    exit !(d1 <= 5 && d1 >= -5 && d2 <= 5 && d2 >= -5 && d3 <= 5 && d3 >= -5) }' ||
    fail "$label shares $hot/$warm/$cool are not within 5 points of 50/30/20"
}

# Samples in perf script output whose stack has frame $1 followed (as its caller) by $2, over all
# samples whose stack has $1: prints "matched total".
caller_ratio() {
  awk -v callee="$1" -v caller="$2" '
    function flush() { if (seen) { total++; if (ok) matched++ } seen = 0; ok = 0; prev = "" }
    /^[^ \t]/ { flush(); next }
    /^$/ { flush(); next }
    { sym = $2; sub(/\+0x[0-9a-f]+$/, "", sym)
      if (prev == callee && sym == caller) ok = 1
      if (sym == callee) seen = 1
      prev = sym }
    END { flush(); printf "%d %d\n", matched, total }' "$dir/script.txt"
}

samples_of() { grep -c "$1" "$dir/script.txt"; }

# Milliseconds of CPU time the samples of FILE whose symbol matches PATTERN stand for (the sum of
# their periods, no callchains). The CPU-time timer fires on scheduler ticks and a sample carries
# every period elapsed since the last one (docs/record.md), so under load a count of samples
# falls short of the CPU time while their periods still add up to it.
cpu_ms_of() {
  perf script -i "$1" -F period,ip,sym 2>/dev/null |
    awk -v pat="$2" '$3 ~ pat { t += $1 } END { printf "%d", t / 1e6 }'
}

# The call paths (user frames, leaf first) of at least 3% of FILE's samples, one per line, sorted.
call_paths() {
  perf script -i "$1" -F ip,sym,dso 2>/dev/null | awk '
    function flush() { if (path != "") { n[path]++; total++ } path = "" }
    /^$/ { flush(); next }
    /kernel.kallsyms|unknown/ { next }
    { sym = $2; sub(/\+0x[0-9a-f]+$/, "", sym); path = path (path == "" ? "" : " <- ") sym }
    END { flush(); for (p in n) if (n[p] * 100 >= total * 3) print p }' | sort
}

case $scenario in
  shares)
    # 50/30/20 within 5 points, in perf's view and in userperf report's; the same as kernel perf
    # record on the same program where the kernel lets us.
    "$userperf" record -q -g -o "$dir/u.data" -- "$bin/hotspots" 2 cpu >/dev/null || fail "record exited $?"
    perf_reads "$dir/u.data"
    check_shares "userperf record (perf report)" "$(perf_shares "$dir/u.data")"
    "$userperf" report -i "$dir/u.data" --stdio >"$dir/ureport.txt" 2>&1 || fail "userperf report exited $?"
    for f in hot_parse warm_transform cool_checksum; do
      grep -q "$f" "$dir/ureport.txt" || fail "userperf report does not name $f"
    done
    if perf record -q -e cpu-clock -F 1000 -g -o "$dir/k.data" -- "$bin/hotspots" 2 cpu >/dev/null 2>"$dir/k.err"; then
      check_shares "kernel perf record" "$(perf_shares "$dir/k.data")"
    else
      echo "SKIP kernel comparison: perf record refused: $(head -2 "$dir/k.err")"
    fi
    ;;
  fp | dwarf)
    if [[ $scenario == fp ]]; then
      "$userperf" record -q -g -o "$dir/c.data" -- "$bin/hotspots" 1 >/dev/null || fail "record exited $?"
    else
      "$userperf" record -q --call-graph dwarf -o "$dir/c.data" -- "$bin/workload_hotspots_nofp" 1 >/dev/null ||
        fail "record exited $?"
    fi
    perf_reads "$dir/c.data"
    pairs=("hot_parse run_rounds" "warm_transform run_rounds" "run_rounds main")
    if [[ $scenario == fp ]]; then
      # gcc 12 gives leaf functions no frame even with -mno-omit-leaf-frame-pointer, so a
      # frame-pointer walk sampled in hot_parse goes from it to main: the kernel's walk does the
      # same. The paths must be the kernel's, where the kernel lets us record.
      pairs=()
      call_paths "$dir/c.data" >"$dir/paths.u"
      for f in hot_parse warm_transform cool_checksum; do
        grep -q "^$f <- main <- __libc_start_call_main$" "$dir/paths.u" || fail "no path $f <- main: $(cat "$dir/paths.u")"
      done
      if perf record -q -e cpu-clock -F 1000 -g -o "$dir/k.data" -- "$bin/hotspots" 1 >/dev/null 2>"$dir/k.err"; then
        call_paths "$dir/k.data" >"$dir/paths.k"
        echo "fp: call paths of >= 3% of samples, userperf:"; sed 's/^/  /' "$dir/paths.u"
        [[ -s $dir/paths.u ]] || fail "no call paths"
        diff "$dir/paths.k" "$dir/paths.u" >/dev/null ||
          fail "call paths differ from kernel perf record -g's: $(diff "$dir/paths.k" "$dir/paths.u" | tr '\n' ' ')"
      else
        echo "SKIP kernel comparison: perf record refused: $(head -2 "$dir/k.err")"
      fi
    fi
    for pair in ${pairs[@]+"${pairs[@]}"}; do
      read -r matched total <<<"$(caller_ratio $pair)"
      echo "$scenario: $pair: $matched of $total samples"
      ((total >= 20)) || fail "only $total samples in ${pair%% *}"
      ((matched * 10 >= total * 9)) || fail "${pair%% *} called from ${pair##* } in only $matched of $total samples"
    done
    ;;
  family)
    "$userperf" record -q -g -o "$dir/f.data" -- "$bin/workload_family" 7 >/dev/null
    rc=$?
    ((rc == 7)) || fail "record returned $rc, the command's status is 7"
    perf_reads "$dir/f.data"
    perf script -i "$dir/f.data" -F pid,tid,ip,sym >"$dir/script.txt" 2>/dev/null
    for f in main_epsilon thread_alpha thread_beta child_gamma exec_delta; do
      n=$(samples_of "$f")
      echo "family: $f in $n samples"
      ((n >= 100)) || fail "$f in only $n samples (0.3 s of CPU at 1 kHz)"
    done
    # Thread and process identities: one tid per thread function, the child's pid for both images.
    awk '/^ *[0-9]+\/[0-9]+/ { split($1, id, "/"); pid = id[1]; tid = id[2]; next }
         / (main_epsilon|thread_alpha|thread_beta|child_gamma|exec_delta)(\+|$)/ {
           s = $2; sub(/\+.*/, "", s); print s, pid, tid }' "$dir/script.txt" | sort -u >"$dir/ids.txt"
    main_pid=$(awk '$1 == "main_epsilon" { print $2; exit }' "$dir/ids.txt")
    child_pid=$(awk '$1 == "child_gamma" { print $2; exit }' "$dir/ids.txt")
    [[ -n $main_pid && -n $child_pid && $main_pid != "$child_pid" ]] || fail "fork child not a process of its own: $(cat "$dir/ids.txt")"
    awk -v p="$main_pid" '$1 ~ /thread_/ && ($2 != p || $3 == p) { exit 1 }' "$dir/ids.txt" ||
      fail "thread samples not in the main process with their own tids: $(cat "$dir/ids.txt")"
    awk -v p="$child_pid" '$1 == "exec_delta" && $2 != p { exit 1 }' "$dir/ids.txt" ||
      fail "exec'd image's samples not under the child's pid: $(cat "$dir/ids.txt")"
    [[ $(awk '$1 ~ /thread_/ { print $3 }' "$dir/ids.txt" | sort -u | wc -l) -eq 2 ]] ||
      fail "thread_alpha and thread_beta do not have one tid each: $(cat "$dir/ids.txt")"
    ;;
  dlopen)
    "$userperf" record -q -g -o "$dir/d.data" -- "$bin/workload_dlopen_host" "$plugin" >/dev/null || fail "record exited $?"
    perf_reads "$dir/d.data"
    n=$(grep -c 'plugin_work' "$dir/script.txt")
    echo "dlopen: plugin_work in $n samples"
    ((n >= 100)) || fail "plugin_work (in a dlopen'ed object) named in only $n samples"
    ;;
  aux)
    # A program instrumented with -finstrument-functions and linked with the calltrace hooks alone:
    # its calls reach the agent's calltrace source, and every sample carries its newest 2 KiB.
    "$userperf" record -q --aux calltrace --aux-sample 2048 -o "$dir/a.data" -- "$bin/workload_traced" 0.5 >/dev/null ||
      fail "record exited $?"
    perf_reads "$dir/a.data"
    "$userperf" script -i "$dir/a.data" >"$dir/uscript.txt" 2>"$dir/uscript.err" || fail "userperf script exited $?"
    samples=$(grep -c 'PERF_RECORD_SAMPLE' "$dir/uscript.txt")
    decoded=$(grep -c '    aux calltrace:' "$dir/uscript.txt")
    leaves=$(grep -c -- '-> traced_leaf+0x0 .* from traced_middle+' "$dir/uscript.txt")
    echo "aux: $samples samples, $decoded with a decoded calltrace, $leaves traced_leaf entries"
    ((samples >= 100)) || fail "only $samples samples"
    ((decoded * 10 >= samples * 9)) || fail "only $decoded of $samples samples carry a calltrace"
    ((leaves >= samples)) || fail "traced_leaf called from traced_middle only $leaves times in $samples windows"
    if grep -q 'aux decode error' "$dir/uscript.txt"; then fail "a calltrace did not decode"; fi
    ;;
  aux-log)
    # A program logging through userperf/log.h with no userperf library: each thread's records go
    # to its own log event (the agent's), and each sample carries its thread's newest records.
    "$userperf" record -q --aux log --aux-sample 512 -o "$dir/l.data" -- "$bin/workload_logged" 0.5 \
      >"$dir/out" || fail "record exited $?"
    grep -q 'refused 0 0 ' "$dir/out" || fail "the program's log writes were refused: $(cat "$dir/out")"
    perf_reads "$dir/l.data"
    "$userperf" script -i "$dir/l.data" >"$dir/uscript.txt" 2>"$dir/uscript.err" || fail "userperf script exited $?"
    if grep -q 'aux decode error' "$dir/uscript.txt"; then fail "a log window did not decode"; fi
    # Per sample: its window decoded, every record from the sample's own thread, one name per
    # thread, steps consecutive, the newest record no later than the sample.
    read -r samples decoded bad <<<"$(awk '
      function flush() {
        if (!in_sample) return
        if (records > 0) decoded++
        in_sample = 0
      }
      / PERF_RECORD_SAMPLE cpu-clock / {
        flush(); in_sample = 1; samples++; records = 0; prev = -1
        split($6, ids, "/"); tid = ids[2]; time = $3; sub(/:$/, "", time); next
      }
      /^[^ ]/ { flush(); next }
      in_sample && / tid [0-9]+: / {
        records++
        t = $3; sub(/:$/, "", t)
        if (t != tid) { bad++; print "record of tid " t " in a sample of " tid > "/dev/stderr" }
        if (name[t] == "") name[t] = $4
        if (name[t] != $4) { bad++; print "tid " t " logs as " name[t] " and " $4 > "/dev/stderr" }
        if (prev >= 0 && $6 != prev + 1) { bad++; print "step " $6 " after " prev " in tid " t > "/dev/stderr" }
        prev = $6
        split($1, st, "."); if (st[1] * 1000000000 + st[2] > time) { bad++; print "record at " $1 " after its sample at " time > "/dev/stderr" }
      }
      END { flush(); printf "%d %d %d\n", samples, decoded, bad + 0 }' "$dir/uscript.txt" 2>"$dir/bad.txt")"
    threads=$(grep -o 'tid [0-9]*: [a-z]* step' "$dir/uscript.txt" | sort -u -k2,3 | awk '{print $3}' | sort -u | tr '\n' ' ')
    echo "aux-log: $samples samples, $decoded with log records, $bad bad, threads logging: $threads"
    ((samples >= 200)) || fail "only $samples samples"
    ((decoded * 10 >= samples * 9)) || fail "only $decoded of $samples samples carry log records"
    ((bad == 0)) || fail "$bad wrong records: $(head -5 "$dir/bad.txt")"
    [[ $threads == "main second " ]] || fail "records from '$threads', expected main and second"
    ;;
  sigint)
    # ^C on a terminal (script(1) gives the recording a pty): it reaches the whole foreground
    # process group, so the command gets it from the terminal; the recorder forwards only
    # signals that did not come from the terminal, then finishes the file once the command exits.
    # (A forwarded second SIGINT can merge with the first while it is pending, so a count of 1 does
    # not prove on its own that none was forwarded; 2 proves that one was.)
    command -v script >/dev/null || { echo "SKIP: no script(1)"; exit 0; }
    (sleep 1; printf '\003'; sleep 3) |
      script -qfec "'$userperf' record -q -o '$dir/i.data' -- '$bin/workload_sigcount'" /dev/null |
      tr -d '\r' >"$dir/out"
    grep -q 'sigints 1$' "$dir/out" || fail "the command did not get exactly one SIGINT: $(cat "$dir/out")"
    perf_reads "$dir/i.data"
    n=$(grep -c 'cpu-clock' "$dir/script.txt")
    echo "sigint: $(grep sigints "$dir/out"), $n samples"
    ((n >= 100)) || fail "only $n samples before ^C"
    ;;
  exec-variants)
    # execlp and execl that fail, then execle with arguments and an environment of its own: the
    # wrappers pass them through unchanged. (That environment has no LD_PRELOAD: the new image
    # runs unrecorded, as docs/record.md's limits say.)
    "$userperf" record -q -o "$dir/e.data" -- "$bin/workload_exec_variants" >"$dir/out" ||
      fail "record exited $?: $(cat "$dir/out")"
    grep -qx 'image: image two three env=42' "$dir/out" || fail "the exec'd image got: $(cat "$dir/out")"
    # Too short for a sample (perf report says so on stderr): the file is finished and readable.
    "$userperf" script -i "$dir/e.data" >/dev/null || fail "userperf script exited $? on the file"
    perf script -i "$dir/e.data" >/dev/null 2>"$dir/script.err" || fail "perf script exited $?"
    ;;
  kill9)
    # kill -9 of the command: every committed record is in the file, which perf reads.
    "$userperf" record -q -o "$dir/k.data" -- "$bin/hotspots" 30 >/dev/null &
    recorder=$!
    sleep 1.5
    workload=$(pgrep -P "$recorder" -x hotspots)
    [[ -n $workload ]] || fail "no hotspots child of the recorder"
    kill -9 "$workload"
    wait "$recorder"
    rc=$?
    ((rc == 137)) || fail "record returned $rc for a command killed by SIGKILL (expected 137)"
    perf_reads "$dir/k.data"
    n=$(grep -c 'cpu-clock' "$dir/script.txt")
    ms=$(cpu_ms_of "$dir/k.data" .)
    echo "kill9: $n samples after 1.5 s, for $ms ms of CPU"
    ((ms >= 500)) || fail "only $ms ms of CPU in $n samples in 1.5 s of a killed command"
    # Its EXIT, as the kernel writes one for a killed task (the agent could say nothing).
    perf script -i "$dir/k.data" --show-task-events 2>/dev/null | grep -q "PERF_RECORD_EXIT($workload:$workload)" ||
      fail "no EXIT record for the killed command ($workload)"
    ;;
  crash)
    "$userperf" record -q -o "$dir/c.data" -- "$bin/workload_family" crash >/dev/null 2>&1
    rc=$?
    ((rc == 139)) || fail "record returned $rc for a command that died of SIGSEGV (expected 139)"
    perf_reads "$dir/c.data"
    n=$(grep -c 'main_epsilon' "$dir/script.txt")
    ((n >= 100)) || fail "only $n samples of the crashed command's main_epsilon"
    # Its EXIT, as the kernel writes one for a task that dies of a signal.
    exits=$(perf script -i "$dir/c.data" --show-task-events 2>/dev/null | grep -c 'PERF_RECORD_EXIT')
    ((exits >= 1)) || fail "no EXIT record for the crashed command"
    ;;
  recorder-death)
    # The recorder dies; the command runs on and finishes its work unharmed.
    "$userperf" record -q -o "$dir/r.data" -- \
      sh -c "'$bin/hotspots' 1.5 >'$dir/out' & echo \$! >'$dir/pid'; wait \$!; echo \$? >'$dir/status'" &
    recorder=$!
    # Killed once the demo has used 0.5 s of CPU (a neighbour on 2 CPUs may halve its share of
    # the wall time) and the recorder has drained at least once since.
    for _ in $(seq 200); do
      [[ -s $dir/pid ]] &&
        (($(awk '{ print $14 + $15 }' "/proc/$(cat "$dir/pid")/stat" 2>/dev/null || echo 0) >= 50)) && break
      sleep 0.05
    done
    sleep 0.2
    kill -9 "$recorder"
    for _ in $(seq 100); do [[ -s $dir/status ]] && break; sleep 0.1; done
    [[ $(cat "$dir/status" 2>/dev/null) == 0 ]] || fail "command after the recorder died: status '$(cat "$dir/status" 2>/dev/null)'"
    grep -q 'rounds' "$dir/out" || fail "command output lost: $(cat "$dir/out")"
    # The file keeps what was drained before the kill, as a whole file perf reads without a word.
    perf_reads "$dir/r.data"
    n=$(perf script -i "$dir/r.data" -F ip,sym 2>/dev/null | grep -c 'hot_parse\|warm_transform\|cool_checksum')
    echo "recorder-death: $n samples of the demo's functions in the file of the killed recorder"
    ((n >= 200)) || fail "only $n samples in the file after 0.5 s of the demo's CPU time"
    # A multi-threaded command with 4-page rings: once the recorder is gone its rings fill and the
    # threads it starts find no recorder; every thread still does all its work (200 threads of
    # 10 ms CPU, measured by each), the status is 0, and it takes no longer than 3 times its bare
    # run + 2 s (nothing waits on a full ring or for a recorder that is gone).
    t0=$(date +%s%N)
    "$bin/workload_many_tasks" threads 200 10 >/dev/null || fail "bare run failed"
    bare_ms=$((($(date +%s%N) - t0) / 1000000))
    t0=$(date +%s%N)
    "$userperf" record -q -m 4 -o "$dir/r2.data" -- \
      sh -c "'$bin/workload_many_tasks' threads 200 10 >'$dir/out2'; echo \$? >'$dir/status2'" 2>/dev/null &
    recorder=$!
    sleep 0.5
    kill -9 "$recorder"
    wait "$recorder" 2>/dev/null
    for _ in $(seq 300); do [[ -s $dir/status2 ]] && break; sleep 0.1; done
    ms=$((($(date +%s%N) - t0) / 1000000))
    [[ $(cat "$dir/status2" 2>/dev/null) == 0 ]] || fail "threaded command after the recorder died: status '$(cat "$dir/status2" 2>/dev/null)'"
    read -r _ threads _ cpu_ms <"$dir/out2"
    echo "recorder-death: 200 threads after the recorder died: '$(cat "$dir/out2")' in $ms ms (bare run $bare_ms ms)"
    ((threads == 200 && cpu_ms >= 200 * 10)) || fail "the threads did not all do their work: $(cat "$dir/out2")"
    ((ms <= 3 * bare_ms + 2000)) || fail "$ms ms with the recorder killed, the bare run took $bare_ms ms"
    perf report -i "$dir/r2.data" --stdio >/dev/null 2>&1 || fail "perf report refused the second killed recorder's file"
    ;;
  disk-full)
    # The output's disk fills mid-run: said at once, the recording stops, the command runs on and
    # its exit status is returned; the file keeps the records written before and perf reads them.
    "$userperf" record -o /dev/full -- "$bin/hotspots" 0.3 >/dev/null 2>"$dir/err"
    rc=$?
    ((rc == 0)) || fail "record -o /dev/full returned $rc, hotspots' status is 0: $(cat "$dir/err")"
    grep -q "No space left on device; recording stopped, the command runs on unrecorded" "$dir/err" ||
      fail "the write error is not said: $(cat "$dir/err")"
    echo "disk-full: /dev/full -> exit $rc: $(head -1 "$dir/err")"
    [[ $(id -u) -eq 0 ]] || { echo "SKIP the full filesystem: needs root to mount a tmpfs"; exit 0; }
    mkdir -p "$dir/small"
    if ! mount -t tmpfs -o size=16k tmpfs "$dir/small" 2>"$dir/mount.err"; then
      echo "SKIP the full filesystem: mount refused: $(cat "$dir/mount.err")"
      echo "PASS [$scenario]"
      exit 0
    fi
    trap 'umount "$dir/small" 2>/dev/null; rm -rf "$dir"' EXIT
    # -g: about 0.2 MB a second of records (0.03 MB beside a load of 25), so 16 KiB fill within
    # the run.
    "$userperf" record -g -o "$dir/small/f.data" -- "$bin/hotspots" 2 >"$dir/out" 2>"$dir/err"
    rc=$?
    ((rc == 0)) || fail "record on a full tmpfs returned $rc: $(cat "$dir/err")"
    grep -q 'rounds' "$dir/out" || fail "command output lost: $(cat "$dir/out")"
    grep -q "No space left on device; recording stopped" "$dir/err" || fail "the full disk is not said: $(cat "$dir/err")"
    grep -q "is incomplete" "$dir/err" || fail "the file is not said to be incomplete: $(cat "$dir/err")"
    perf_reads "$dir/small/f.data"
    n=$(perf script -i "$dir/small/f.data" -F tid 2>/dev/null | wc -l)
    echo "disk-full: 16 KiB tmpfs -> exit $rc, $n samples kept: $(head -1 "$dir/err")"
    ((n >= 20)) || fail "only $n samples kept in the full file"
    # userperf's own readers read the same records as perf (up to the header's data size, the
    # recorder's last checkpoint), exit 0, and say on stderr that the file is incomplete.
    for tool in report script; do
      "$userperf" $tool -i "$dir/small/f.data" >"$dir/u$tool.txt" 2>"$dir/u$tool.err" ||
        fail "userperf $tool exited $? on the full file: $(head -3 "$dir/u$tool.err")"
      grep -q "f.data: file is incomplete (no header features: its writer stopped before the end): records read up to" \
        "$dir/u$tool.err" || fail "userperf $tool does not say the file is incomplete: $(head -3 "$dir/u$tool.err")"
      echo "disk-full: userperf $tool: $(head -1 "$dir/u$tool.err")"
    done
    u=$(grep -c 'PERF_RECORD_SAMPLE' "$dir/uscript.txt")
    ((u == n)) || fail "userperf script reads $u samples, perf script $n"
    u=$(sed -n "s/^# Samples: \([0-9]*\) .*/\1/p" "$dir/ureport.txt" | head -1)
    ((u == n)) || fail "userperf report counts ${u:-no} samples, perf script $n"
    ;;
  many-threads | many-processes)
    # Many short-lived tasks: every task's FORK, COMM and EXIT, and the CPU time as samples'
    # PERIODs or counted lost (Total Lost Samples). perf warns on stderr when more than 5% of the
    # samples are lost; anything else there fails.
    if [[ $scenario == many-threads ]]; then args=(threads 200 10); else args=(processes 1000 3); fi
    "$userperf" record -q -o "$dir/m.data" -- "$bin/workload_many_tasks" "${args[@]}" >"$dir/out" 2>"$dir/err"
    rc=$?
    ((rc == 0)) || fail "record returned $rc: $(cat "$dir/err")"
    grep -q 'is corrupt\|malformed\|ignored' "$dir/err" && echo "NOTE: $(head -3 "$dir/err")"
    grep -q 'is corrupt' "$dir/err" && fail "a ring was found corrupt: $(cat "$dir/err")"
    grep -q 'malformed' "$dir/err" && fail "the recorder ignored a malformed message: $(cat "$dir/err")"
    perf_reads "$dir/m.data"
    # "pid tid" of each FORK and EXIT, and the pids of every COMM.
    perf script -i "$dir/m.data" --show-task-events -F pid,tid,period,event 2>/dev/null >"$dir/tasks.txt"
    forks=$(grep -c 'PERF_RECORD_FORK' "$dir/tasks.txt")
    exits=$(grep -c 'PERF_RECORD_EXIT' "$dir/tasks.txt")
    comm_pids=$(grep 'PERF_RECORD_COMM' "$dir/tasks.txt" | awk '{ split($1, id, "/"); print id[1] }' | sort -u | wc -l)
    sampled=$(perf script -i "$dir/m.data" -F period 2>/dev/null | awk '{ t += $1 } END { printf "%d", t / 1e6 }')
    lost=$(sed -n 's/^# Total Lost Samples: \([0-9]*\)$/\1/p' "$dir/report.txt")
    lost=${lost:-0}
    # The workload's line: "threads N cpu_ms T" or "children N execs E cpu_ms T user_ms U".
    field() { awk -v name="$1" '{ for (i = 1; i < NF; ++i) if ($i == name) print $(i + 1) }' "$2"; }
    tasks=$(awk '{ print $2 }' "$dir/out")
    cpu_ms=$(field cpu_ms "$dir/out")
    echo "$scenario: ${args[*]}: $forks FORK, $exits EXIT, COMM for $comm_pids pids; $sampled ms sampled + $lost ms lost of $cpu_ms ms of CPU$([[ $scenario == many-processes ]] && echo " ($(field user_ms "$dir/out") ms in user mode)")"
    # cpu-clock:u, as userperf's: user mode only.
    if perf record -q -e cpu-clock:u -F 1000 -o "$dir/k.data" -- "$bin/workload_many_tasks" "${args[@]}" >"$dir/kout" 2>"$dir/k.err"; then
      kforks=$(perf script -i "$dir/k.data" --show-task-events 2>/dev/null | grep -c 'PERF_RECORD_FORK')
      kexits=$(perf script -i "$dir/k.data" --show-task-events 2>/dev/null | grep -c 'PERF_RECORD_EXIT')
      ksampled=$(perf script -i "$dir/k.data" -F period 2>/dev/null | awk '{ t += $1 } END { printf "%d", t / 1e6 }')
      echo "$scenario: kernel perf record: $kforks FORK, $kexits EXIT; $ksampled ms sampled of $(field cpu_ms "$dir/kout") ms of CPU$([[ $scenario == many-processes ]] && echo " ($(field user_ms "$dir/kout") ms in user mode)")"
    else
      echo "SKIP kernel comparison: perf record refused: $(head -2 "$dir/k.err")"
    fi
    if [[ $scenario == many-threads ]]; then
      # Every thread is heard of (at its first sample, or at its end when it used a whole period):
      # its FORK and EXIT, as the kernel writes them (its FORK and EXIT, 200 each).
      if ((forks < tasks || exits < tasks)); then
        # Which threads lack one, and what the file has of them.
        grep 'PERF_RECORD_FORK\|PERF_RECORD_EXIT' "$dir/tasks.txt" |
          sed -n 's/.*PERF_RECORD_\(FORK\|EXIT\)(\([0-9]*\):\([0-9]*\)).*/\1 \3/p' | sort -k2 |
          awk '{ n[$2] = n[$2] " " $1 } END { for (t in n) if (n[t] != " FORK EXIT" && n[t] != " EXIT FORK") print t ":" n[t] }' >&2
        fail "$forks FORK and $exits EXIT records for $tasks threads: $(head -3 "$dir/err")"
      fi
      # Each thread's whole periods are a sample's or counted lost; less than one period per
      # thread (its last, partial one) is neither, as under the kernel; 2% for rounding.
      ((sampled + lost + tasks >= cpu_ms * 98 / 100)) ||
        fail "$sampled ms sampled + $lost ms lost + $tasks ms (a partial period per thread) < 98% of $cpu_ms ms of CPU"
    else
      # Every process has its FORK (all but the command's own) and EXIT, as under the kernel: a
      # fork child that ends before its first scheduler tick is heard of at exit(). The kernel
      # writes no COMM for a fork child (perf takes its parent's name); userperf names each one,
      # all 1,001 in 16 runs of 18, 1,000 in the others (in one of them, whose stderr was read, the
      # recorder said "process N vanished before its state was read"; not understood): held to 99%.
      ((forks >= tasks)) || fail "$forks FORK records for $tasks children"
      ((exits >= tasks + 1)) || fail "$exits EXIT records for $((tasks + 1)) processes"
      ((comm_pids * 100 >= (tasks + 1) * 99)) || fail "$comm_pids of $((tasks + 1)) processes have a COMM record"
      # Each image's whole periods are a sample's or counted lost; less than one period per image
      # (its last, partial one, and the time before the agent's clocks start in an exec'd image)
      # is neither. Held against the children's user time: fork, exec and exit are kernel time,
      # which exclude_kernel samples cannot see (as kernel perf's cpu-clock:u), and on a
      # paravirtualized guest they are 35-40% of the children's CPU time. 107-111% of it in 3 runs
      # (load 1); 90% for heavier load.
      execs=$(field execs "$dir/out")
      user_ms=$(field user_ms "$dir/out")
      images=$((tasks + execs + 1))
      ((sampled + lost + images >= user_ms * 90 / 100)) ||
        fail "$sampled ms sampled + $lost ms lost + $images ms (a partial period per image) < 90% of the $user_ms ms of CPU in user mode"
    fi
    ;;
  ring-scribble)
    # Four threads damage their own rings (data_tail rewound, random bytes over the records,
    # garbage data_head, a random control page) while three workers burn 1 s of CPU each: the
    # recorder names each damaged ring once, loses only those, writes no record twice, and every
    # worker's samples add up to its CPU time.
    "$userperf" record -o "$dir/s.data" -- "$bin/workload_ring_scribble" 1 3 >"$dir/out" 2>"$dir/err"
    rc=$?
    ((rc == 0)) || fail "record returned $rc, the command's status is 0: $(cat "$dir/err")"
    perf_reads "$dir/s.data"
    scribblers=$(awk '$1 == "scribbler" { print $3 }' "$dir/out")
    [[ $(wc -w <<<"$scribblers") -eq 4 ]] || fail "not 4 scribblers: $(cat "$dir/out")"
    for tid in $scribblers; do
      grep -q "userperf record: the ring of thread $tid (process [0-9]*) is corrupt (.*); it is no longer read" "$dir/err" ||
        fail "the damaged ring of thread $tid is not said: $(cat "$dir/err")"
    done
    n=$(grep -c 'is corrupt' "$dir/err")
    ((n == 4)) || fail "$n rings said to be corrupt, 4 were damaged: $(cat "$dir/err")"
    sed -n 's/^userperf record: the ring of thread/ring-scribble: thread/p' "$dir/err"
    dups=$(perf script -i "$dir/s.data" -F tid,time 2>/dev/null | sort | uniq -d | wc -l)
    ((dups == 0)) || fail "$dups samples written twice (same thread and time)"
    perf script -i "$dir/s.data" -F tid,period 2>/dev/null |
      awk '{ ms[$1] += $2 / 1e6 } END { for (t in ms) printf "%s %d\n", t, ms[t] }' >"$dir/ms"
    while read -r _ tid cpu; do
      ms=$(awk -v t="$tid" '$1 == t { print $2 }' "$dir/ms")
      echo "ring-scribble: worker $tid: ${ms:-0} ms of samples for $cpu ms of CPU"
      ((${ms:-0} * 100 >= cpu * 90)) || fail "worker $tid: ${ms:-0} ms of samples for $cpu ms of CPU"
    done < <(grep '^worker ' "$dir/out")
    [[ $(grep -c '^worker ' "$dir/out") -eq 3 ]] || fail "not 3 workers: $(cat "$dir/out")"
    "$userperf" report -i "$dir/s.data" --stdio >/dev/null 2>"$dir/ureport.err" ||
      fail "userperf report exited $?: $(head -3 "$dir/ureport.err")"
    ;;
  unprivileged)
    # As nobody, with no capability: the tools and the program copied where nobody can read them.
    command -v setpriv >/dev/null || { echo "SKIP: no setpriv"; exit 0; }
    [[ $(id -u) -eq 0 ]] || { echo "SKIP: needs root to switch to nobody"; exit 0; }
    mkdir -p "$dir/bin" "$dir/lib" "$dir/out"
    cp "$userperf" "$bin/hotspots" "$dir/bin/" && cp "$bin/../lib/libuserperf_agent.so" "$dir/lib/" || fail "copy"
    chmod 755 "$dir" "$dir/bin" "$dir/lib" && chown nobody "$dir/out"
    echo "kernel.perf_event_paranoid = $(cat /proc/sys/kernel/perf_event_paranoid)"
    setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
      "$dir/bin/userperf" record -q -g -o "$dir/out/n.data" -- "$dir/bin/hotspots" 1 cpu >/dev/null ||
      fail "record as nobody exited $?"
    chown root "$dir/out/n.data"  # perf refuses files owned by another user
    perf_reads "$dir/out/n.data"
    check_shares "as nobody" "$(perf_shares "$dir/out/n.data")"
    ;;
  tracepoint-accounting)
    # Every hit of a user tracepoint fired 1,000,000 times in a tight loop is a sample or counted
    # lost (the kernel never throttles a software event's first overflow): a ring that holds them
    # all loses none, a small one loses some, and samples + lost == fired in the summary, in
    # userperf report's header and in perf report's Total Lost Samples. Then two threads and two
    # tracepoints: the summary counts every thread, per tracepoint.
    n=1000000
    # "S L": the summary's samples and lost; "F W L": tracepoint $2's line.
    summary_counts() { sed -n 's/.*(\([0-9]*\) samples, \([0-9]*\) lost) ]$/\1 \2/p' "$1"; }
    tracepoint_counts() {
      sed -n "s/^\[ userperf record: $2: \([0-9]*\) fired, \([0-9]*\) written, \([0-9]*\) lost ]\$/\1 \2 \3/p" "$1"
    }
    for pages in 32768 4; do
      file=$dir/t$pages.data
      "$userperf" record -e loop:tick -m $pages -o "$file" -- "$bin/workload_tp_loop" $n >/dev/null 2>"$dir/err" ||
        fail "record -m $pages exited $?: $(cat "$dir/err")"
      read -r samples lost <<<"$(summary_counts "$dir/err")"
      read -r fired written tp_lost <<<"$(tracepoint_counts "$dir/err" loop:tick)"
      echo "-m $pages: $samples samples, $lost lost; loop:tick $fired fired, $written written, $tp_lost lost"
      [[ -n $samples && -n $fired ]] || fail "no summary of samples and of loop:tick: $(cat "$dir/err")"
      ((fired == n)) || fail "-m $pages: loop:tick fired $fired times, the program fired it $n"
      ((written == samples && tp_lost == lost)) || fail "-m $pages: loop:tick's line disagrees with the summary"
      ((samples + lost == n)) || fail "-m $pages: $samples samples + $lost lost != $n fired"
      if ((pages == 32768)); then
        ((lost == 0)) || fail "-m $pages: $lost lost with a ring that holds every sample"
      else
        ((lost > 0)) || fail "-m $pages: nothing lost in a 4-page ring"
      fi
      "$userperf" report -i "$file" --top 1 >"$dir/ureport.txt" 2>&1 || fail "userperf report exited $?"
      # perf's header rounds the sample count ("1000K"); a tracepoint sample's period is 1, so the
      # event count that follows it is the count of samples.
      u_samples=$(sed -n "/^# Samples: .* of event 'loop:tick'\$/{n;s/^# Event count (approx.): \([0-9]*\)\$/\1/p}" "$dir/ureport.txt")
      u_lost=$(sed -n 's/^# Total Lost Samples: \([0-9]*\)$/\1/p' "$dir/ureport.txt")
      ((${u_samples:-0} == samples && ${u_lost:-0} == lost)) ||
        fail "-m $pages: userperf report says ${u_samples:-no} samples, ${u_lost:-0} lost: $(head -4 "$dir/ureport.txt")"
      if command -v perf >/dev/null; then
        perf report -i "$file" --stats >"$dir/stats.txt" 2>&1 || fail "perf report --stats exited $?"
        p_samples=$(awk '$1 == "SAMPLE" { n = $3 } END { print n + 0 }' "$dir/stats.txt")
        grep -q "THROTTLE events" "$dir/stats.txt" && fail "-m $pages: THROTTLE records in the file"
        perf report -i "$file" --stdio --sort comm >"$dir/report.txt" 2>/dev/null || fail "perf report exited $?"
        p_lost=$(sed -n 's/^# Total Lost Samples: \([0-9]*\)$/\1/p' "$dir/report.txt")
        echo "-m $pages: perf report: $p_samples samples, Total Lost Samples ${p_lost:-none}"
        ((p_samples == samples && ${p_lost:--1} == lost)) ||
          fail "-m $pages: perf report says $p_samples samples, Total Lost Samples ${p_lost:-none}"
      else
        echo "SKIP perf report's view: no perf installed"
      fi
    done
    "$userperf" record -e loop:tick,loop:done -m 4 -o "$dir/threads.data" -- "$bin/workload_tp_loop" 200000 2 \
      >/dev/null 2>"$dir/err" || fail "record of 2 threads exited $?: $(cat "$dir/err")"
    read -r samples lost <<<"$(summary_counts "$dir/err")"
    read -r fired written tp_lost <<<"$(tracepoint_counts "$dir/err" loop:tick)"
    read -r d_fired d_written d_lost <<<"$(tracepoint_counts "$dir/err" loop:done)"
    echo "2 threads: $samples samples, $lost lost; loop:tick $fired/$written/$tp_lost, loop:done $d_fired/$d_written/$d_lost"
    ((fired == 400000 && written + tp_lost == fired)) || fail "2 threads: loop:tick $fired fired, $written written, $tp_lost lost"
    ((d_fired == 2 && d_written + d_lost == 2)) || fail "2 threads: loop:done $d_fired fired, $d_written written, $d_lost lost"
    ((samples == written + d_written && lost == tp_lost + d_lost)) || fail "2 threads: the summary is not the sum of the tracepoints'"
    ;;
  sigmask)
    # Threads that block every signal (a pool created under a full mask, as xz's are) are sampled,
    # and every mask they read back is the one they set (the workload checks: "masks ok"). A
    # thread that blocks with a raw rt_sigprocmask cannot be: its periods are LOST_SAMPLES in the
    # file and the summary names it.
    "$userperf" record -o "$dir/m.data" -- "$bin/workload_sigmask" 0.4 >"$dir/out" 2>"$dir/err"
    rc=$?
    ((rc == 0)) || fail "record exited $rc: $(cat "$dir/err")"
    grep -q "masks ok" "$dir/out" || fail "the workload saw a mask it did not set: $(cat "$dir/err")"
    grep -q "samples not taken: 1 thread blocked the sampling signal.*: [0-9]* (rawblock): [0-9]*" "$dir/err" ||
      fail "the summary does not name the thread that blocked the signal: $(cat "$dir/err")"
    perf report -i "$dir/m.data" --stdio >"$dir/report.txt" 2>"$dir/report.err" || fail "perf report exited $?"
    lost=$(awk '/^# Total Lost Samples:/ { print $NF }' "$dir/report.txt")
    perf script -i "$dir/m.data" -F comm,ip,sym >"$dir/script.txt" 2>"$dir/script.err" || fail "perf script exited $?"
    # perf says how much was lost (above 5%), and nothing else.
    if grep -v -e '^Warning:$' -e '^Processed [0-9]* samples and lost' -e '^$' "$dir/script.err" "$dir/report.err"; then
      fail "perf wrote more than the lost-samples warning"
    fi
    pool=$(samples_of pool_burn)
    raw=$(samples_of raw_burn)
    echo "sigmask: pool_burn $pool samples, main_burn $(samples_of main_burn), raw_burn $raw, lost samples $lost"
    pool_ms=$(cpu_ms_of "$dir/m.data" '^pool_burn')
    echo "sigmask: pool_burn's samples stand for $pool_ms ms of CPU"
    ((pool_ms >= 300)) ||
      fail "the pool thread (every signal blocked) got $pool samples, $pool_ms ms, for 0.4 s of CPU"
    ((raw <= 5)) || fail "raw_burn got $raw samples while it blocked the signal"
    ((${lost:-0} >= 300)) || fail "only ${lost:-0} lost samples counted for 0.4 s of blocked CPU time"
    ;;
  xz)
    # Debian's xz: its worker threads block every signal. userperf must take at least 90% of the
    # samples per CPU-second kernel perf takes on the same command, with the same hottest addresses
    # at about the same shares (liblzma is stripped: perf names them by address). Per CPU-second: two runs of a 2-thread
    # program on a shared 2-CPU VM differ in CPU time by more than that (one CI run: 2.3 s, the
    # next 3.6 s), so /usr/bin/time runs inside each recording and says what xz used.
    awk 'BEGIN { srand(7); n = split("the of and to in is that for it as was with be by on not he this are or his from at which but have an they you were her she there been one all we their", w, " ")
      for (i = 0; i < 120000; i++) { line = ""; for (j = 0; j < 8; j++) line = line w[int(rand() * n) + 1] " "; print line int(rand() * 100000) } }' >"$dir/words.txt"
    xz_cmd=(/usr/bin/time -f "%U %S" -o "$dir/cpu" xz -T2 -6 --block-size=1MiB -c "$dir/words.txt")
    top() { perf report -i "$1" --stdio --no-children --comm xz --sort dso,sym -q 2>/dev/null | awk 'NF { print $2 " " $4 }' | head -"$2"; }
    # "dso sym share" of every user-mode entry, its share of xz's user-mode samples (in percent,
    # no sign): userperf records user mode alone (exclude_kernel), and kernel perf's [k] entries,
    # 3-6% of xz's time on KVM and more on a PVM guest (11% of xz's CPU time is system time
    # there), made every user address's share a little smaller in its profile than in userperf's
    # (0x15b76 +2.9 points in one CI run on such a guest). Over user mode alone, 6 rounds there (4
    # beside other tests): userperf minus kernel perf -2.0 to +0.3 at the top 3, userperf a
    # little below because the kernel time of page faults lands on user instructions in its
    # profile (docs/record.md, Limits).
    shares() {
      perf report -i "$1" --stdio --no-children --comm xz --sort dso,sym -q 2>/dev/null |
        awk 'NF && $3 == "[.]" { sub("%", "", $1); e[++n] = $2 " " $4; v[n] = $1; t += $1 }
          END { for (i = 1; i <= n; ++i) printf "%s %.2f\n", e[i], v[i] * 100 / t }'
    }
    # Samples of xz per second of its CPU time.
    rate() { perf script -i "$1" -F comm 2>/dev/null | awk -v cpu="$(awk '{ print $1 + $2 }' "$dir/cpu")" '$1 == "xz" { n++ } END { printf "%.0f\n", n / cpu }'; }
    # xz's effective number of samples, (sum of periods)^2 / sum of squared periods: the count of
    # equal-period samples whose shares are as precise. Kernel perf's periods are all equal;
    # userperf's sample carries every period its thread used since its last one, several when
    # pokes are missed (a busy VM: 1460 of 2162 samples, 2048 of 2994).
    n_eff() { perf script -i "$1" -F comm,period 2>/dev/null | awk '$1 == "xz" { s += $2; q += $2 * $2 } END { printf "%.0f\n", q ? s * s / q : 0 }'; }
    # Kernel perf records userperf's recording: both profiles are of the same xz run. Run apart,
    # they differ by more than the recorders do: the hot addresses follow loads that miss the cache
    # in liblzma's binary-tree match finder (0x15bc4, 0x15b73, 0x15bde, 0x16928), and a run's
    # memory latency (a neighbour VM, the other xz thread) moves their shares. On 16 separate runs
    # of each recorder here, 0x15bc9 held 11.7-17.3% under userperf and 12.4-16.9% under kernel
    # perf, following the run's CPU time in both (r = 0.93 and 0.87, +4.1 points per CPU-second:
    # 2.7-4.4 s); two consecutive kernel perf runs differed by up to 4.0 points, 3 pairs of 15 by
    # more than 2.5, and the test failed in about half of CI runs on that noise. Recorded together
    # (10 runs), userperf's share minus kernel perf's was +0.09 +- 0.84 (0x15bc9), +0.58 +- 0.83
    # (0x15b76), +0.41 +- 0.66 (0x15be0), +0.26 +- 0.51 (0x1692b), at most 1.91: the spread of two
    # independent samplers of ~3500 samples (binomial: 0.85 at 15%), and userperf a little above
    # because kernel perf's profile also has [k] entries (3-6% of xz's time) whose time userperf
    # gives to the user instruction that entered the kernel (page faults: 0x16932 +1.2).
    perf_ok=yes
    perf record -q -e cpu-clock -o "$dir/probe.data" -- true >/dev/null 2>"$dir/k.err" || perf_ok=no
    # The shares must agree within 3 standard errors of the difference of two independent samplers,
    # sqrt(p(1-p)(1/n_u + 1/n_k)) with p kernel perf's share and n each file's effective samples:
    # 2.6 points at 15% and 3400 samples each (the measured spread above is that of sampling), 3.3
    # with 1800 (a busy VM). The better of two rounds: with the bias above a round fails on noise
    # about 1% of the time (0x15b76), two in a row 0.01%; a bias of 3 points fails both. Beside
    # 6-8 busy compilers (load 7-8 on 2 CPUs) userperf gave 0x15be0 +1.3 to +3.0 over kernel perf
    # in the same run (4 rounds) and 0x15bc9 -0.2 to -2.7 (6 runs); one round failed on it.
    # A neighbour VM's burst during one run also moves the rate by a few points (alone here:
    # 93-95% of kernel perf's; recorded together, 97%; beside the compilers, 54-93%).
    if [[ $perf_ok == yes ]]; then
      for round in 1 2; do
        perf record -q -e cpu-clock -F 1000 -o "$dir/k.data" -- \
          "$userperf" record -q -o "$dir/x.data" -- "${xz_cmd[@]}" >/dev/null 2>"$dir/k.err" ||
          fail "record under perf record exited $?: $(head -5 "$dir/k.err")"
        perf_reads "$dir/x.data"
        u=$(rate "$dir/x.data")
        k=$(rate "$dir/k.data")
        echo "xz round $round ($(cat "$dir/cpu") s of CPU): userperf $u samples per CPU-second, kernel perf $k"
        echo "  userperf top: $(top "$dir/x.data" 5 | tr '\n' ',')"
        echo "  kernel perf top: $(top "$dir/k.data" 5 | tr '\n' ',')"
        # Kernel perf's three hottest addresses hold about the same share in userperf's profile.
        shares "$dir/x.data" >"$dir/shares.u"
        nu=$(n_eff "$dir/x.data")
        nk=$(n_eff "$dir/k.data")
        off=""
        while read -r dso sym k_share; do
          u_share=$(awk -v d="$dso" -v s="$sym" '$1 == d && $2 == s { print $3 }' "$dir/shares.u")
          tol=$(awk -v k="$k_share" -v nu="$nu" -v nk="$nk" 'BEGIN { p = k / 100
            printf "%.2f\n", (nu > 0 && nk > 0) ? 300 * sqrt(p * (1 - p) * (1 / nu + 1 / nk)) : 0 }')
          echo "  $sym: kernel perf ${k_share}%, userperf ${u_share:-0}% (bound $tol; effective samples $nk, $nu)"
          awk -v u="${u_share:-0}" -v k="$k_share" -v t="$tol" 'BEGIN { d = u - k; exit !(d <= t && d >= -t) }' ||
            off+="kernel perf's top-3 $dso $sym: ${k_share}% there, ${u_share:-0}% in userperf's (more than $tol apart); "
        done < <(shares "$dir/k.data" | head -3)
        [[ -z $off ]] || echo "  ${off%; }"
        ((u * 10 >= k * 9)) && [[ -z $off ]] && break
      done
      ((u * 10 >= k * 9)) || fail "userperf took $u samples per CPU-second, under 90% of kernel perf's $k"
      [[ -z $off ]] || fail "${off%; }"
    else
      echo "SKIP kernel comparison: perf record refused: $(head -2 "$dir/k.err")"
      "$userperf" record -q -o "$dir/x.data" -- "${xz_cmd[@]}" >/dev/null || fail "record exited $?"
      perf_reads "$dir/x.data"
      u=$(rate "$dir/x.data")
      echo "xz: userperf $u samples per CPU-second ($(cat "$dir/cpu") s); top: $(top "$dir/x.data" 5 | tr '\n' ',')"
      ((u >= 900)) || fail "userperf took $u samples per CPU-second at 1 kHz"
    fi
    ;;
  clock-coverage)
    # dd copying 1-byte blocks spends most of its CPU time in read and write: the summary says
    # how much of the CPU time cpu-clock counted its samples carry, and that figure is the sum of
    # the PERIODs perf script reads. The demo, pure computation, gets no such line.
    "$userperf" record -o "$dir/d.data" -- dd if=/dev/zero of=/dev/null bs=1 count=300000 \
      >/dev/null 2>"$dir/err" || fail "record of dd exited $?: $(cat "$dir/err")"
    line=$(grep '^userperf record: cpu-clock: its samples carry' "$dir/err") ||
      fail "no coverage line for dd: $(cat "$dir/err")"
    echo "clock-coverage: $line"
    read -r carried counted < <(sed -n 's/.*carry \([0-9]*\) ms of the \([0-9]*\) ms of CPU time.*/\1 \2/p' <<<"$line")
    summed=$(perf script -i "$dir/d.data" -F period 2>/dev/null | awk '{ s += $1 } END { printf "%.0f", s / 1e6 }')
    echo "clock-coverage: perf script's PERIODs add up to $summed ms"
    ((carried - summed <= 1 && summed - carried <= 1)) ||
      fail "the line says the samples carry $carried ms, perf script's PERIODs add up to $summed ms"
    ((carried * 10 < counted * 9)) || fail "a line for $carried of $counted ms"
    "$userperf" record -o "$dir/h.data" -- "$bin/hotspots" 0.3 >/dev/null 2>"$dir/err" ||
      fail "record of hotspots exited $?"
    ! grep -q 'its samples carry' "$dir/err" || fail "a coverage line for the demo: $(cat "$dir/err")"
    ;;
  syscall-dense)
    # sqlite3 sorting through temporary files: ~300k pread64/pwrite64 calls a second. Ticker
    # signals that arrive at a system-call exit must not pile samples onto the call wrappers: the
    # top-10 user-mode self shares are within 3 points of kernel perf's (cpu-clock:u).
    {
      echo "PRAGMA cache_size=-64; PRAGMA temp_store=FILE;"
      echo "CREATE TABLE t(a INTEGER, b INTEGER, c TEXT);"
      echo "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM s WHERE i < 600000)"
      echo "INSERT INTO t SELECT i, i % 1000, printf('row-%08d', i * 7919 % 600000) FROM s;"
      echo "SELECT b, count(*), sum(a), max(c) FROM t GROUP BY b ORDER BY 2 DESC LIMIT 3;"
      echo "SELECT count(*) FROM t x JOIN t y ON x.a = y.a + 1 WHERE x.b < 500;"
      echo "SELECT c, count(*) FROM t GROUP BY c ORDER BY c LIMIT 3;"
      echo "SELECT count(DISTINCT c), count(DISTINCT a % 77777) FROM t;"
    } >"$dir/q.sql"
    # User-mode self shares: "symbol percent", over the samples perf shows as [.], but those of
    # symbols matching $2 (an awk regex; "^$" for none).
    user_shares() {
      perf report -i "$1" --stdio --no-children --sort sym -q 2>/dev/null |
        awk -v skip="${2:-^$}" '$2 == "[.]" && $3 !~ skip { s[$3] += $1; t += $1 }
          END { for (k in s) printf "%s %.2f\n", k, s[k] * 100 / t }' | sort -k2 -rn
    }
    # The comparison leaves the two wrappers out on both sides. On a paravirtualized guest (PVM)
    # the kernel holds interrupts through its system-call exit path and delivers them at the
    # wrapper's return address or an instruction later: kernel perf's cpu-clock:u put 18% of its
    # samples there, time spent in the kernel (userperf takes such a tick as a system-call exit).
    wrappers='^__libc_p(read|write)$'
    # malloc's heap on transparent huge pages: 1,300 page faults instead of 5,900. A signal-based
    # sampler puts the kernel time of a page fault on the faulting instruction, where kernel
    # perf's cpu-clock:u sees none of it (docs/record.md, Limits): with 4 KiB pages, _int_malloc's
    # first touch of new heap made it 5.0-5.5% of userperf's samples, 1.4-1.6% of kernel perf's.
    export GLIBC_TUNABLES=glibc.malloc.hugetlb=1
    # Kernel perf's top-10 symbols whose userperf share is more than 3 points off; "" when none.
    off_by_more_than_3() {
      while read -r sym kshare; do
        ushare=$(awk -v s="$sym" '$1 == s { print $2 }' "$dir/u.compared")
        echo "  $sym: kernel $kshare%, userperf ${ushare:-0}%" >&2
        awk -v a="${ushare:-0}" -v b="$kshare" 'BEGIN { d = a - b; exit !(d > 3 || d < -3) }' &&
          echo "$sym: userperf ${ushare:-0}% vs kernel perf $kshare%"
      done < <(head -10 "$dir/k.compared")
    }
    # The better of two rounds: userperf gives sqlite3VdbeExec 1.7-2.7 points more than kernel
    # perf here (docs/record.md says why), close enough to the bound that sampling noise alone
    # crosses it now and then.
    for round in 1 2; do
      "$userperf" record -q -F 2000 -o "$dir/s.data" -- sqlite3 :memory: <"$dir/q.sql" >/dev/null ||
        fail "record exited $?"
      perf_reads "$dir/s.data"
      user_shares "$dir/s.data" >"$dir/u.shares"
      pread=$(awk '$1 ~ /^__libc_p(read|write)/ { s += $2 } END { printf "%.2f", s }' "$dir/u.shares")
      echo "syscall-dense: userperf top: $(head -5 "$dir/u.shares" | tr '\n' ',') __libc_pread+pwrite $pread%"
      awk -v p="$pread" 'BEGIN { exit !(p < 3) }' || fail "__libc_pread/pwrite take $pread% of userperf's samples"
      if ! perf record -q -e cpu-clock:u -F 2000 -o "$dir/k.data" -- sqlite3 :memory: <"$dir/q.sql" >/dev/null 2>"$dir/k.err"; then
        echo "SKIP kernel comparison: perf record refused: $(head -2 "$dir/k.err")"
        break
      fi
      user_shares "$dir/k.data" >"$dir/k.shares"
      kpread=$(awk '$1 ~ /^__libc_p(read|write)/ { s += $2 } END { printf "%.2f", s }' "$dir/k.shares")
      echo "syscall-dense: kernel perf top: $(head -5 "$dir/k.shares" | tr '\n' ',') __libc_pread+pwrite $kpread%"
      user_shares "$dir/s.data" "$wrappers" >"$dir/u.compared"
      user_shares "$dir/k.data" "$wrappers" >"$dir/k.compared"
      off=$(off_by_more_than_3)
      [[ -z $off ]] && break
      ((round == 2)) && fail "$(echo "$off" | head -3 | tr '\n' ';') (more than 3 points)"
    done
    ;;
  refusals)
    # What the agent cannot enter is refused before it runs, with the reason and the way out, and no
    # file is left: a static program; as a user other than root, a setuid-root one. Run from a
    # recorded shell instead, such programs (and one exec'd with a cleared environment) are named
    # at the end; the exit status stays the command's.
    cd "$dir" || fail "cd"
    "$userperf" record -o "$dir/s.data" -- "$bin/workload_static" >/dev/null 2>"$dir/err"
    rc=$?
    ((rc != 0)) || fail "a static command was recorded (exit 0)"
    grep -q "statically linked.*cannot enter it.*Build it dynamically linked" "$dir/err" ||
      fail "no reason for the static command: $(cat "$dir/err")"
    [[ ! -e $dir/s.data ]] || fail "the refused static command left a file"
    echo "refusals: static -> exit $rc: $(head -c 150 "$dir/err")"
    mkdir -p "$dir/suid" && chmod 755 "$dir" "$dir/suid"
    cp "$bin/hotspots" "$dir/suid/hotspots" && chmod 4755 "$dir/suid/hotspots"
    mkdir -p "$dir/out" && chown nobody "$dir/out"
    setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
      "$userperf" record -o "$dir/out/u.data" -- "$dir/suid/hotspots" 0.1 >/dev/null 2>"$dir/err"
    rc=$?
    ((rc != 0)) || fail "a setuid-root command was recorded by nobody (exit 0)"
    grep -q "setuid.*cannot enter it" "$dir/err" || fail "no reason for the setuid command: $(cat "$dir/err")"
    [[ ! -e $dir/out/u.data ]] || fail "the refused setuid command left a file"
    echo "refusals: setuid as nobody -> exit $rc"
    "$userperf" record -o "$dir/m.data" -- sh -c "'$bin/workload_static'; env -i '$bin/hotspots' 0.2; '$bin/hotspots' 0.2; exit 5" \
      >/dev/null 2>"$dir/err"
    rc=$?
    ((rc == 5)) || fail "record returned $rc, the command's status is 5: $(cat "$dir/err")"
    grep -q "2 processes ran without the agent" "$dir/err" || fail "the summary does not name them: $(cat "$dir/err")"
    grep -q "([w]orkload_static): statically linked" "$dir/err" || fail "the static program is not named: $(cat "$dir/err")"
    grep -q "(hotspots): run with an environment that drops LD_PRELOAD" "$dir/err" ||
      fail "the program run with env -i is not named: $(cat "$dir/err")"
    perf_reads "$dir/m.data"
    sed -n '/ran without the agent/,$p' "$dir/err" | sed 's/^/refusals: /'
    # vfork children run on their parent's memory: one that execs a program the agent cannot enter
    # is named all the same, whether or not the recorder has heard of its parent yet.
    "$userperf" record -o "$dir/v.data" -- "$bin/workload_exec_variants" vfork "$bin/workload_static" \
      >"$dir/vfork.out" 2>"$dir/err"
    rc=$?
    ((rc == 0)) || fail "vfork: record returned $rc: $(cat "$dir/err")"
    grep -qx 'vfork: 127 3 3' "$dir/vfork.out" || fail "vfork: the program printed $(cat "$dir/vfork.out")"
    grep -q "2 processes ran without the agent" "$dir/err" || fail "vfork: the summary does not name both: $(cat "$dir/err")"
    perf_reads "$dir/v.data"
    echo "refusals: vfork: $(grep 'ran without' "$dir/err")"
    ;;
  descriptors)
    # A program that closes every descriptor it did not open and then talks over its own
    # socketpair receives exactly its own bytes, and is sampled throughout: through the C library
    # (close_range, closefrom, close up to its limit: the agent's descriptors, high above its own,
    # are not closed) and with a raw close_range system call (they are; the recorder still reads
    # the rings it maps and says what is no longer recorded).
    for mode in wrapped raw; do
      "$userperf" record -o "$dir/$mode.data" -- "$bin/workload_closer" "$mode" 0.4 >"$dir/out" 2>"$dir/err"
      rc=$?
      ((rc == 0)) || fail "$mode: record returned $rc: $(cat "$dir/err")"
      grep -q "own bytes ok" "$dir/out" || fail "$mode: the program's socketpair got other bytes: $(cat "$dir/err")"
      perf_reads "$dir/$mode.data"
      n=$(samples_of closer_burn)
      ms=$(cpu_ms_of "$dir/$mode.data" '^closer_burn')
      echo "descriptors: $mode: $n samples in closer_burn for $ms ms; $(grep -v '^\[' "$dir/err" | head -1)"
      ((ms >= 300)) || fail "$mode: only $ms ms in $n samples for 0.4 s of CPU"
      if [[ $mode == raw ]]; then
        grep -q "closed its connection to the recorder and runs on" "$dir/err" ||
          fail "raw: the lost connection is not said: $(cat "$dir/err")"
      elif grep -q . < <(grep -v '^\[ userperf record' "$dir/err"); then
        fail "wrapped: unexpected messages: $(cat "$dir/err")"
      fi
    done
    ;;
  bad-input)
    cd "$dir" || fail "cd"
    expect_error() {  # expect_error PATTERN ARGS...: non-zero exit, PATTERN on stderr, no perf.data
      local pattern=$1
      shift
      "$userperf" record "$@" >/dev/null 2>"$dir/err"
      local rc=$?
      ((rc != 0)) || fail "record $* exited 0"
      grep -qi -- "$pattern" "$dir/err" || fail "record $*: stderr lacks '$pattern': $(cat "$dir/err")"
      [[ ! -e $dir/perf.data ]] || fail "record $* left perf.data behind"
      echo "bad-input: record $* -> exit $rc: $(head -1 "$dir/err")"
    }
    expect_error "no-such-event" -e no-such-event -- "$bin/hotspots" 0.1
    expect_error "bogus" --bogus -- "$bin/hotspots" 0.1
    expect_error "command" --
    expect_error "does-not-exist" -- ./does-not-exist
    expect_error "--aux" --aux ftrace -- "$bin/hotspots" 0.1
    expect_error "needs --aux" --aux-sample 1024 -- "$bin/hotspots" 0.1
    expect_error "denied\|directory\|cannot" -o /proc/no/such/dir/perf.data -- "$bin/hotspots" 0.1
    # A program the verifier rejects: refused before the command runs, with the verifier's reason.
    expect_error "verifier rejected it.*R0 invalid mem access 'map_value_or_null'" \
      --bpf "$bin/../bpf/progs/handler_rejected.bpf.o" -- "$bin/hotspots" 0.1
    ;;
  bpf)
    # --bpf on the default tier (the JIT on x86-64) and with --no-bpf-jit (the interpreter): a
    # program that drops every sample leaves none in the file, while the same recording without
    # it has samples; neither tier says anything on stderr (no fallback notice).
    samples_in() { sed -n 's/.*(\([0-9]*\) samples.*/\1/p' "$dir/err"; }
    "$userperf" record -o "$dir/none.data" -- "$bin/hotspots" 0.3 >/dev/null 2>"$dir/err" ||
      fail "record without --bpf exited $?: $(cat "$dir/err")"
    n=$(samples_in)
    echo "bpf: without a program: $n samples"
    ((n >= 20)) || fail "only $n samples without a program (0.3 s at 1 kHz)"
    for tier in "" --no-bpf-jit; do
      # shellcheck disable=SC2086 # $tier is empty or one flag
      "$userperf" record -o "$dir/bpf.data" --bpf "$bin/../bpf/progs/keep_none.bpf.o" $tier \
        -- "$bin/hotspots" 0.3 >/dev/null 2>"$dir/err" ||
        fail "record --bpf $tier exited $?: $(cat "$dir/err")"
      n=$(samples_in)
      echo "bpf: keep_none ${tier:-(JIT)}: $n samples"
      [[ $n == 0 ]] || fail "keep_none ${tier:-(JIT)} kept $n samples: $(cat "$dir/err")"
      # Off x86-64 the recorder says once that programs run on the interpreter.
      if grep -q . < <(grep -v '^\[ userperf record' "$dir/err" |
        grep -v 'userperf: bpf: the eBPF JIT supports x86-64 only'); then
        fail "record --bpf $tier: unexpected messages: $(cat "$dir/err")"
      fi
      if [[ $(uname -m) == x86_64 ]] && grep -q 'userperf: bpf:' "$dir/err"; then
        fail "record --bpf $tier on x86-64: a fallback was said: $(cat "$dir/err")"
      fi
    done
    expect_needs() {
      "$userperf" record --no-bpf-jit -- "$bin/hotspots" 0.1 >/dev/null 2>"$dir/err" &&
        fail "--no-bpf-jit without --bpf exited 0"
      grep -q -- "--bpf" "$dir/err" || fail "--no-bpf-jit alone: $(cat "$dir/err")"
    }
    expect_needs
    ;;
  off-cpu)
    # --off-cpu -g on a program whose main thread computes 50%, sleeps 25% (nanosleep) and waits
    # 25% for a pipe (read): offcpu-time splits 50/50 between the two call sites, cpu-clock is
    # compute_phase's, and the two events' totals (ns of CPU time, ns blocked) are 50/50, each
    # within 5 points, in perf report's view and in userperf report's.
    "$userperf" record -q --off-cpu -g -o "$dir/off.data" -- "$bin/workload_offcpu" ||
      fail "record exited $?"
    perf_reads "$dir/off.data"
    grep -q "of event 'offcpu-time'" "$dir/report.txt" || fail "perf report shows no offcpu-time"
    # From a report with per-event sections: "cpu_total off_total compute sleep pipe", compute the
    # children% of compute_phase in cpu-clock, sleep and pipe those of sleep_phase and pipe_phase
    # in offcpu-time.
    offcpu_view() {
      awk '/of event / { split($0, quoted, "\047"); ev = quoted[2] }
        /^# Event count/ { count[ev] = $NF }
        $1 ~ /%$/ && $2 ~ /%$/ { share[ev, $NF] = $1 + 0 }
        END { printf "%s %s %.1f %.1f %.1f\n", count["cpu-clock"] + 0, count["offcpu-time"] + 0,
              share["cpu-clock", "compute_phase"], share["offcpu-time", "sleep_phase"],
              share["offcpu-time", "pipe_phase"] }' "$1"
    }
    check_offcpu() {
      local label=$1 cpu off compute sleep pipe
      read -r cpu off compute sleep pipe <<<"$2"
      echo "$label: cpu-clock $cpu ns, offcpu-time $off ns; compute_phase $compute% of cpu-clock," \
        "sleep_phase $sleep% and pipe_phase $pipe% of offcpu-time"
      awk -v c="$cpu" -v o="$off" -v k="$compute" -v s="$sleep" -v p="$pipe" 'BEGIN {
        share = 100 * c / (c + o)
        exit !(c > 0 && o > 0 && share >= 45 && share <= 55 && k >= 95 &&
               s >= 45 && s <= 55 && p >= 45 && p <= 55) }' ||
        fail "$label: not within 5 points of cpu/off-cpu 50/50 and sleep/pipe 50/50"
    }
    perf report -i "$dir/off.data" --stdio --children --sort sym -g none >"$dir/perf_view.txt" \
      2>/dev/null || fail "perf report --children failed"
    check_offcpu "perf report" "$(offcpu_view "$dir/perf_view.txt")"
    "$userperf" report -i "$dir/off.data" --stdio >"$dir/up_view.txt" 2>"$dir/up_view.err" ||
      fail "userperf report exited $?: $(head -3 "$dir/up_view.err")"
    check_offcpu "userperf report" "$(offcpu_view "$dir/up_view.txt")"
    ;;
  off-cpu-threads)
    # pthread waits (workload_offcpu_threads): the main thread waits in pthread_cond_clockwait
    # (cond_phase) and pthread_mutex_lock (mutex_phase) 600 ms each, and a thread that never
    # computes waits 300 ms in pthread_join (join_phase): offcpu-time splits 40/40/20 between the
    # three call sites, each within 5 points, in perf report's view and in userperf report's. The
    # joiner's share shows that a thread's first off-CPU sample announces it.
    "$userperf" record -q --off-cpu -g -o "$dir/threads.data" -- "$bin/workload_offcpu_threads" ||
      fail "record exited $?"
    perf_reads "$dir/threads.data"
    threads_view() {
      awk '/of event / { split($0, quoted, "\047"); ev = quoted[2] }
        $1 ~ /%$/ && $2 ~ /%$/ && ev == "offcpu-time" { share[$NF] = $1 + 0 }
        END { printf "%.1f %.1f %.1f\n", share["cond_phase"], share["mutex_phase"],
              share["join_phase"] }' "$1"
    }
    check_threads() {
      local label=$1 cond mutex join
      read -r cond mutex join <<<"$2"
      echo "$label: offcpu-time cond_phase $cond%, mutex_phase $mutex%, join_phase $join%"
      awk -v c="$cond" -v m="$mutex" -v j="$join" 'BEGIN {
        exit !(c >= 35 && c <= 45 && m >= 35 && m <= 45 && j >= 15 && j <= 25) }' ||
        fail "$label: not within 5 points of cond/mutex/join 40/40/20"
    }
    perf report -i "$dir/threads.data" --stdio --children --sort sym -g none \
      >"$dir/perf_view.txt" 2>/dev/null || fail "perf report --children failed"
    check_threads "perf report" "$(threads_view "$dir/perf_view.txt")"
    "$userperf" report -i "$dir/threads.data" --stdio >"$dir/up_view.txt" 2>"$dir/up_view.err" ||
      fail "userperf report exited $?: $(head -3 "$dir/up_view.err")"
    check_threads "userperf report" "$(threads_view "$dir/up_view.txt")"
    ;;
  off-cpu-condvar)
    # Both of glibc's condition variables (workload_offcpu_condvar): pthread_cond_wait and
    # pthread_cond_timedwait of the default implementation (@GLIBC_2.3.2) and of the old one
    # (@GLIBC_2.2.5), 300 ms each: offcpu-time splits 25/25/25/25 between the four call sites,
    # each within 5 points, in perf report's view and in userperf report's.
    "$userperf" record -q --off-cpu -g -o "$dir/condvar.data" -- "$bin/workload_offcpu_condvar" \
      2>"$dir/condvar.err" || fail "record exited $?: $(head -3 "$dir/condvar.err")"
    if grep -q "libuserperf_condvar" "$dir/condvar.err"; then
      fail "$(grep -m1 libuserperf_condvar "$dir/condvar.err")"
    fi
    perf_reads "$dir/condvar.data"
    condvar_view() {
      awk '/of event / { split($0, quoted, "\047"); ev = quoted[2] }
        $1 ~ /%$/ && $2 ~ /%$/ && ev == "offcpu-time" { share[$NF] = $1 + 0 }
        END { printf "%.1f %.1f %.1f %.1f\n", share["new_wait_phase"], share["new_timedwait_phase"],
              share["old_wait_phase"], share["old_timedwait_phase"] }' "$1"
    }
    check_condvar() {
      local label=$1 new_wait new_timed old_wait old_timed
      read -r new_wait new_timed old_wait old_timed <<<"$2"
      echo "$label: offcpu-time new_wait_phase $new_wait%, new_timedwait_phase $new_timed%," \
        "old_wait_phase $old_wait%, old_timedwait_phase $old_timed%"
      awk -v a="$new_wait" -v b="$new_timed" -v c="$old_wait" -v d="$old_timed" 'BEGIN {
        exit !(a >= 20 && a <= 30 && b >= 20 && b <= 30 && c >= 20 && c <= 30 && d >= 20 && d <= 30) }' ||
        fail "$label: not within 5 points of 25/25/25/25"
    }
    perf report -i "$dir/condvar.data" --stdio --children --sort sym -g none \
      >"$dir/perf_view.txt" 2>/dev/null || fail "perf report --children failed"
    check_condvar "perf report" "$(condvar_view "$dir/perf_view.txt")"
    "$userperf" report -i "$dir/condvar.data" --stdio >"$dir/up_view.txt" 2>"$dir/up_view.err" ||
      fail "userperf report exited $?: $(head -3 "$dir/up_view.err")"
    check_condvar "userperf report" "$(condvar_view "$dir/up_view.txt")"
    ;;
  off-cpu-errno)
    # What wrapped blocking calls return, and their errno, the same bare and recorded: no EINTR
    # the program would not have seen, errno untouched by the sample written after a wait; the
    # pthread functions' error codes, the semaphores' errno, the masked waits' results.
    "$bin/workload_offcpu_errno" >"$dir/bare.txt" || fail "bare run exited $?"
    "$userperf" record -q --off-cpu -g -o "$dir/errno.data" -- "$bin/workload_offcpu_errno" \
      >"$dir/recorded.txt" || fail "recorded run exited $?"
    cat "$dir/recorded.txt"
    diff "$dir/bare.txt" "$dir/recorded.txt" || fail "results differ under --off-cpu"
    grep -q "^restart: read=1 errno=0 handled=1$" "$dir/bare.txt" ||
      fail "the SA_RESTART read was not restarted: $(head -1 "$dir/bare.txt")"
    # Its threads' last periods are counted lost (a few of ~50 samples: perf may warn).
    perf_reads "$dir/errno.data"
    # The waits were written: poll's and the sleeps' call sites are in offcpu-time.
    # (grep -q reads from a process substitution, never a pipe: under pipefail a producer that
    # writes after grep -q has matched and exited dies of SIGPIPE and fails the pipeline.)
    perf script -i "$dir/errno.data" -F event,ip,sym >"$dir/chains.txt" 2>/dev/null ||
      fail "perf script -F event,ip,sym failed"
    grep -q "main" < <(grep -A3 "offcpu-time" "$dir/chains.txt") ||
      fail "no offcpu-time sample reaches main"
    # Every wrapped wait that blocked 30 ms has its sample, the libc function as leaf.
    grep -A1 "offcpu-time" "$dir/chains.txt" |
      awk '$1 !~ /offcpu-time/ { sub(/@.*/, "", $2); print $2 }' | sort -u >"$dir/leaves.txt"
    for call in pthread_mutex_lock pthread_mutex_timedlock pthread_mutex_clocklock \
      pthread_cond_clockwait pthread_rwlock_rdlock \
      pthread_rwlock_timedrdlock sem_wait sem_timedwait sem_clockwait pthread_join \
      pthread_timedjoin_np pthread_barrier_wait ppoll __pselect epoll_pwait epoll_pwait2; do
      grep -qx "$call" "$dir/leaves.txt" || fail "no offcpu-time sample of $call: $(tr '\n' ' ' <"$dir/leaves.txt")"
    done
    ;;
  *) fail "unknown scenario $scenario" ;;
esac
echo "PASS [$scenario]"
