#!/usr/bin/env bash
# run.sh BIN_DIR OUT_DIR SECONDS TARGET... : runs each libFuzzer harness
# BIN_DIR/TARGET for SECONDS on a copy of its seed corpus
# (tests/fuzz/corpus/TARGET/, never changed), with its dictionary
# (tests/fuzz/TARGET.dict) when there is one. Everything of one run goes to
# OUT_DIR/TARGET/: the grown corpus, the log, and the input of a failure.
#
# Prints one line per target: executions, executions per second, and the
# coverage libFuzzer reached (cov: edges, ft: features). Exits 1 after the
# last target when any of them crashed, leaked, hung (-timeout, seconds
# for one input) or went past a memory limit (-rss_limit_mb for the whole
# process, -malloc_limit_mb for one allocation).
set -uo pipefail

bin_dir=$1 out_dir=$2 seconds=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
failed=()

for target in "$@"; do
    bin=$bin_dir/$target
    out=$out_dir/$target
    rm -rf "$out/corpus"
    mkdir -p "$out/corpus"
    cp "$here/corpus/$target"/* "$out/corpus/" 2>/dev/null
    dict=()
    [ -f "$here/$target.dict" ] && dict=("-dict=$here/$target.dict")
    log=$out/log
    "$bin" -max_total_time="$seconds" -print_final_stats=1 \
        -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=10 \
        -artifact_prefix="$out/" "${dict[@]}" "$out/corpus" >"$log" 2>&1
    rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
    cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -n 1)
    if [ $rc -eq 0 ]; then
        printf 'fuzz %-12s %10s runs  %7s exec/s  %s\n' "$target" \
            "${runs:-?}" "${speed:-?}" "${cov:-cov: ?}"
    else
        # the input libFuzzer saved: crash-*, leak-*, timeout-*, oom-*
        input=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" \
                | tail -n 1)
        why=$(grep -m 1 -o 'ERROR: [A-Za-z]*Sanitizer: [^ ]*.*\|ERROR: libFuzzer: [a-z-]*\|runtime error: .*' \
              "$log" | head -n 1)
        echo "fuzz $target: FAILED (${why:-exit status $rc})"
        # what the harness said, or the sanitizer's summary, and the
        # frames of our code
        grep -m 1 '^fuzz: \|^SUMMARY: ' "$log" | sed 's/^/    /'
        grep '^ *#[0-9]* 0x' "$log" | grep -v 'fuzzer::\|__sanitizer\|libc\.so\|nptl\|abort\|raise\|fuzz_fail\|compiler-rt\|__interceptor' \
            | head -n 8 | sed 's/ (BuildId: [0-9a-f]*)//; s/^ */    /'
        echo "    the input: ${input:-none saved}; the whole log: $log"
        echo "    run it again: $bin $input"
        failed+=("$target")
    fi
done

if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: failed: ${failed[*]}"
    exit 1
fi
