#!/usr/bin/env bash
# memory.sh - every program's memory estimate against the peak it reaches.
# Run by `make check` from the repository root:
#
#   bash tests/memory.sh [--table | --gpt2-small] [folder holding ch1 .. ch9,
#                        peak and gpt2_random]   (default: .)
#
# Before its first large allocation each program adds up what it will
# allocate (common/mem.h) and, with MEM_ESTIMATE=1, prints "chN: memory
# estimated N MiB at the peak" on stderr. The sweep below runs each one
# at a few sizes, short runs chosen so that the model, the activations or
# the data and not the process's start-up memory make most of the peak,
# under tests/memory/peak, which reports the peak resident memory the
# kernel measured (VmHWM): the estimate must be within 10% of it. (The
# estimate counts the start-up memory too, measured when the program
# checks: the code, the libraries, the data read so far.) Then the
# refusals: a size that does not fit under a limit on the address space
# (ulimit -v) must end at once, in under a second, with exit status 2 and
# one line of at most 80 columns naming the size (MiB) and the flags to
# lower; and a run given just the room its refusal asked for runs.
#
# With --table it prints the results as the README's table (Markdown).
# About 30 seconds on a busy 2-core machine; ./ch8's rows only where
# nvcc built it and nvidia-smi lists a GPU.
set -u
TABLE=0 GPT2=0
if [ "${1:-}" = "--table" ]; then TABLE=1; shift; fi
if [ "${1:-}" = "--gpt2-small" ]; then GPT2=1; shift; fi
BIN=$(cd "${1:-.}" && pwd)
PEAK=$BIN/peak
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
[ -x "$PEAK" ] || { echo "memory.sh: no $PEAK (make builds it)" >&2; exit 1; }
[ -x "$BIN/gpt2_random" ] \
    || { echo "memory.sh: no $BIN/gpt2_random (make builds it)" >&2; exit 1; }
# a sanitizer's shadow memory is in no estimate
if grep -qa "__asan_init\|__tsan_init" "$BIN/ch1"; then
    echo "memory.sh: a sanitizer build: skipped"
    exit 0
fi
# two threads wherever the machine has more: the estimate's share for the
# runtime grows with the threads, and so does the peak
export OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2 MEM_ESTIMATE=1
passed=0 failed=0
fail() { echo "FAIL: $*" >&2; failed=$((failed + 1)); }

# The data of the sweep: Tiny Shakespeare 8 times over, and a small
# corpus for the translation (Multi30k's first pairs).
for i in 1 2 3 4 5 6 7 8; do cat data/tinyshakespeare.txt; done \
    >"$TMP/ts8.txt"
# 30000 distinct characters: a bigram table of 7 GB
wide=$(printf '\\u%04x' $(seq 19968 49967))
LC_ALL=C.UTF-8 printf '%b%b' "$wide" "$wide" >"$TMP/wide"
mkdir -p "$TMP/mt"
for split in train val test_2016_flickr; do
    n=100
    [ "$split" = train ] && n=3000
    for lang in de en; do
        head -n "$n" "data/multi30k/$split.$lang" >"$TMP/mt/$split.$lang"
    done
done

# sweep PROG ARGS...: runs it under peak; its estimate (the last one it
# printed) must be within 10% of the measured peak.
sweep() {
    local prog=$1
    shift
    "$PEAK" timeout 120 "$BIN/$prog" "$@" >/dev/null 2>"$TMP/err" \
        </dev/null
    local rc=$?
    local est
    est=$(sed -n 's/^.*: memory estimated \([0-9.]*\) MiB.*$/\1/p' \
          "$TMP/err" | tail -n 1)
    peak=$(sed -n 's/^peak_kib \([0-9]*\)$/\1/p' "$TMP/err")
    # refused because this machine has not that much free now: its right
    if [ "$rc" = 2 ] && grep -q "MiB ([0-9]* free)" "$TMP/err"; then
        echo "  $prog $*: skipped, $(grep -o 'needs.*free)' "$TMP/err")"
        return
    fi
    if [ "$rc" != 0 ] || [ -z "$est" ] || [ -z "$peak" ]; then
        fail "$prog $*: exit status $rc, estimate '$est', peak '$peak'"
        sed 's/^/    /' "$TMP/err" >&2
        return
    fi
    local row args="$*"
    row=$(awk -v e="$est" -v k="$peak" 'BEGIN {
        p = k / 1024; d = 100 * (e - p) / p
        printf "%.1f %.1f %+.1f %d", e, p, d, (d <= 10 && d >= -10) }')
    # shown without the flags every run of the program shares, nor $TMP
    args=${args/"${SHARED[$prog]:-}"/...}
    args=${args//"$TMP/"/}
    set -- "$prog" "$args" $row
    if [ "$TABLE" = 1 ]; then
        printf '| `%s %s` | %s | %s | %s%% |\n' "$1" "$2" "$3" "$4" "$5"
    else
        printf '  %-4s %-50s %7s %7s %6s%%\n' "$1" "${2:0:50}" "$3" "$4" \
            "$5"
    fi
    if [ "$6" = 1 ]; then passed=$((passed + 1))
    else fail "$1 $2: estimated $3 MiB, peak $4 MiB ($5%, over 10%)"; fi
}

# --gpt2-small: ./ch9 alone, on a GPT-2 of GPT-2 small's shape (124M
# parameters, random weights: a 500 MB folder in $TMP), generating and
# fine-tuning at the default batch of 4 x 64, whose peak must also stay
# under 2.5 GB (2,384 MiB). About a minute; not part of make check.
if [ "$GPT2" = 1 ]; then
    declare -A SHARED=()
    echo "memory.sh: ./ch9 on GPT-2 small's shape, 2 threads"
    "$BIN/gpt2_random" "$TMP/small" tests/reference/ch9_tok 50257 1024 \
        12 12 768 || fail "gpt2_random: cannot write GPT-2 small"
    sweep ch9 --model "$TMP/small" --tokens 20 --threads 2
    sweep ch9 --finetune --model "$TMP/small" --steps 1 --eval-iters 1 \
        --sample-tokens 20 --quiet --threads 2 --out "$TMP/small-run"
    [ "${peak:-0}" -le $((2384 * 1024)) ] \
        || fail "ch9 --finetune: a peak of $((peak / 1024)) MiB, over 2.5 GB"
    # generating from the run's checkpoint (chapter 5's format), read
    # tensor by tensor into the model as Hugging Face's files are
    sweep ch9 --checkpoint "$TMP/small-run/model.safetensors" --tokens 20 \
        --threads 2
    # the same run resumed for a step: its moments go from the state file
    # straight into AdamW's, so it peaks no higher
    sweep ch9 --finetune --resume "$TMP/small-run" --steps 2 \
        --eval-iters 1 --sample-tokens 20 --quiet --threads 2
    [ "${peak:-0}" -le $((2384 * 1024)) ] \
        || fail "ch9 --finetune --resume: a peak of $((peak / 1024)) MiB," \
                "over 2.5 GB"
    echo "memory.sh: $passed passed, $failed failed"
    [ "$failed" = 0 ]
    exit
fi

s6=(--steps 1 --eval-iters 1 --sample-chars 20 --quiet --threads 2)
# a saved run resumed for one more step
r6=(--steps 2 --eval-iters 1 --sample-chars 20 --quiet --threads 2)
t7=(--steps 1 --quiet --threads 2)
m7=(--task translate --data "$TMP/mt" --merges 200 --steps 1 --quiet
    --threads 2 --show 0)
declare -A SHARED=([ch6]="${s6[*]}" [ch8]="${s6[*]}")
if [ "$TABLE" = 1 ]; then
    echo "| program and flags | estimate MiB | peak MiB | difference |"
    echo "|---|---:|---:|---:|"
else
    echo "memory.sh: estimate against the measured peak (MiB), 2 threads"
    echo "  (... : ch6's ${s6[*]})"
fi
sweep ch1
sweep ch1 --data "$TMP/ts8.txt"
sweep ch2 --max-T 2048
sweep ch3 --max-T 512
sweep ch3 --channels 1024 --ff 16384 --max-T 64
sweep ch4 --channels 512 --depths 4
sweep ch4 --channels 256 --depths 8,24
sweep ch5 --tokens 1
sweep ch5 --layers 8 --embd 256 --tokens 20
sweep ch5 --embd 256 --block 256 --positional sinusoidal --tokens 20
sweep ch6 "${s6[@]}"
sweep ch6 "${s6[@]}" --batch 32 --embd 256 --layers 2
sweep ch6 "${s6[@]}" --batch 4 --block 512 --embd 64 --heads 2
# Resumed runs: planned from the saved files' headers before they are
# read. A wide model on a small batch once peaked while the state file
# (AdamW's moments, twice the model) was held whole beside the run's
# memory; the moments now go from the file into AdamW's one at a time.
"$BIN/ch6" "${s6[@]}" --batch 32 --embd 256 --layers 2 --out "$TMP/r6a" \
    >/dev/null 2>&1 </dev/null || fail "ch6: cannot save a run to resume"
"$BIN/ch6" "${s6[@]}" --batch 1 --block 16 --embd 512 --layers 4 \
    --out "$TMP/r6b" >/dev/null 2>&1 </dev/null \
    || fail "ch6: cannot save a run to resume"
cp -r "$TMP/r6a" "$TMP/r6c"   # for the refusal below
sweep ch6 --resume "$TMP/r6a" "${r6[@]}"
sweep ch6 --resume "$TMP/r6b" "${r6[@]}"
sweep ch7 "${t7[@]}" --embd 128 --ffn 512 --batch 256 --held-out 200
sweep ch7 "${t7[@]}" --embd 256 --ffn 1024 --batch 256 --held-out 1000 \
    --show 20 --beam 8
sweep ch7 "${m7[@]}" --embd 64 --ffn 256 --layers 1 --heads 2 --beam 2
sweep ch7 "${m7[@]}" --embd 128 --ffn 512 --layers 2 --heads 4 --beam 4
# ./ch9 on a GPT-2 of random weights in Hugging Face's layout
# (gpt2_random): GPT-2's vocabulary of 50,257 and block of 1,024, with 4
# layers 256 wide, so that, as in GPT-2 small, the logits (B x T x 50257,
# and their gradient) are most of a fine-tuning run's activations, and
# the model and its KV cache most of a generation's. (GPT-2 small's own
# shape, 124M parameters: tests/memory.sh --gpt2-small, below.)
"$BIN/gpt2_random" "$TMP/g9" tests/reference/ch9_tok 50257 1024 \
    4 4 256 || fail "gpt2_random: cannot write a GPT-2 to measure"
s9=(--finetune --model "$TMP/g9" --steps 1 --eval-iters 1
    --sample-tokens 20 --quiet --threads 2)
SHARED[ch9]="${s9[*]}"
sweep ch9 --model "$TMP/g9" --tokens 20 --threads 2
sweep ch9 --model "$TMP/g9" --tokens 20 --threads 2 --no-cache
sweep ch9 "${s9[@]}" --out "$TMP/r9"
sweep ch9 "${s9[@]}" --batch 8 --window 128
sweep ch9 --checkpoint "$TMP/r9/model.safetensors" --tokens 20 --threads 2
sweep ch9 --finetune --resume "$TMP/r9" --steps 2 --eval-iters 1 \
    --sample-tokens 20 --quiet --threads 2
if [ -x "$BIN/ch8" ] && nvidia-smi -L 2>/dev/null | grep -q "^GPU"; then
    # the host's memory: chapter 6's plan, with the CUDA runtime in what
    # the process holds when it checks
    sweep ch8 "${s6[@]}"
    sweep ch8 "${s6[@]}" --batch 64 --embd 256 --layers 4
fi

# refuse LIMIT_KIB FLAG PROG ARGS...: under ulimit -v LIMIT_KIB the run is
# refused in under a second, exit 2, with one line of at most 80 columns
# that names the size in MiB and FLAG. Sets NEED to that size.
refuse() {
    local limit=$1 flag=$2 prog=$3
    shift 3
    NEED=0
    local t0 t1
    t0=$(date +%s%N)
    (ulimit -v "$limit"; exec timeout 10 "$BIN/$prog" "$@" >/dev/null \
        2>"$TMP/err" </dev/null)
    local rc=$?
    t1=$(date +%s%N)
    local ms=$(((t1 - t0) / 1000000)) why="" line
    line=$(grep -v "memory estimated" "$TMP/err")
    if [ "$rc" != 2 ]; then why="exit status $rc, expected 2"
    elif [ "$ms" -ge 1000 ]; then why="took $ms ms"
    elif [ "$(printf '%s\n' "$line" | wc -l)" != 1 ]; then
        why="expected one line on stderr"
    elif [ "${#line}" -gt 80 ]; then why="${#line} columns"
    elif ! printf '%s' "$line" | grep -q "needs [0-9]* MiB"; then
        why="no size in MiB"
    elif ! printf '%s' "$line" | grep -qF -- "$flag"; then
        why="does not name $flag"
    fi
    if [ -n "$why" ]; then
        fail "$prog $* under ulimit -v $limit: $why"
        sed 's/^/    /' "$TMP/err" >&2
        return
    fi
    passed=$((passed + 1))
    NEED=$(printf '%s' "$line" | sed -n 's/.*needs \([0-9]*\) MiB.*/\1/p')
    printf '  refused in %3d ms: %s\n' "$ms" "$line"
}

# fits PROG ARGS...: a refusal is only for what would not have fit: given
# the room the last refusal asked for (NEED MiB of address space) and a
# tenth more, the same run goes to its end.
fits() {
    local prog=$1 room=$((NEED * 1024 * 11 / 10))
    shift
    if [ "$NEED" -gt 0 ] && (ulimit -v "$room"; exec timeout 120 \
        "$BIN/$prog" "$@" >/dev/null 2>"$TMP/err" </dev/null); then
        passed=$((passed + 1))
        printf '  and runs under ulimit -v %d MiB\n' $((room / 1024))
    else
        fail "$prog $* under ulimit -v $room KiB, the room it asked for"
        sed 's/^/    /' "$TMP/err" >&2
    fi
}

if [ "$TABLE" = 0 ]; then
    echo "memory.sh: refusals, under an address-space limit (ulimit -v)"
    # 4000 layers would grow to every byte of the machine before the
    # kernel killed the run
    # (OpenBLAS needs some 400 MiB of address space to start at all)
    refuse $((16 << 20)) --layers ch5 --layers 4000
    refuse $((768 << 10)) --data ch1 --data "$TMP/wide"
    refuse $((768 << 10)) --max-T ch2 --max-T 4096
    refuse $((640 << 10)) --max-T ch3 --max-T 2048
    refuse $((512 << 10)) --channels ch4 --channels 1024 --depths 4
    refuse $((512 << 10)) --layers ch5 --layers 8 --embd 256 --tokens 20
    fits ch5 --layers 8 --embd 256 --tokens 20
    refuse $((512 << 10)) --batch ch6 "${s6[@]}" --batch 32 --embd 256 \
        --layers 2
    fits ch6 "${s6[@]}" --batch 32 --embd 256 --layers 2
    # a saved run has no flags to lower: its line says so, and the
    # folder is left as it was, byte for byte
    before=$(stat -c %y "$TMP/r6c"; ls -lA --time-style=+%s.%N "$TMP/r6c"
           cksum "$TMP/r6c"/*)
    refuse $((512 << 10)) "the saved run is too large here" ch6 --resume \
        "$TMP/r6c" "${r6[@]}"
    after=$(stat -c %y "$TMP/r6c"; ls -lA --time-style=+%s.%N "$TMP/r6c"
           cksum "$TMP/r6c"/*)
    if [ "$before" = "$after" ]; then passed=$((passed + 1))
    else fail "ch6 --resume: the refused run's folder changed"; fi
    fits ch6 --resume "$TMP/r6c" "${r6[@]}"
    refuse $((512 << 10)) --window ch9 "${s9[@]}" --batch 8 --window 128
    fits ch9 "${s9[@]}" --batch 8 --window 128
    refuse $((768 << 10)) --batch ch7 "${t7[@]}" --embd 256 --ffn 1024 \
        --batch 256 --held-out 1000
    refuse $((768 << 10)) --batch-tokens ch7 "${m7[@]}" --embd 256 \
        --ffn 1024 --layers 2 --heads 4 --beam 4 --batch-tokens 8000
    echo "memory.sh: $passed passed, $failed failed"
fi
[ "$failed" = 0 ]
