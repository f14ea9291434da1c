#!/usr/bin/env bash
# bad_inputs.sh - a catalogue of bad inputs for the chapter programs ./ch1
# .. ./ch9: bad flags and numbers, bad files, damaged and mismatched
# checkpoints, half-written run folders, outputs that cannot be written.
# Run by `make check` from the repository root:
#
#   bash tests/bad_inputs.sh [folder holding ch1 .. ch9]   (default: .)
#
# (./ch8 is there only where nvcc built it. Without a GPU it cannot
# train, so its files are never read there: its cases are its flags, its
# output, and that a run it cannot train is an error.)
#
# Every case must end the way DESIGN.md asks: exit status 1 (a file or its
# data) or 2 (a usage error) as the case says, never 0 or a signal, within
# 20 seconds, with exactly one line on stderr that holds the expected text
# and fits in 80 columns (tests/error_width.sh says how they are counted),
# and under an address-space limit (ulimit -v 4 GiB, where every valid run
# here fits) so that a size that does not fit is refused before it is
# allocated. tests/cli/test_cli.sh checks the flags' behaviours; this is
# the systematic list, by category. About 20 seconds: the models are tiny
# and runs stop after 2 steps.
set -u
BIN=$(cd "${1:-.}" && pwd)
ROOT=$(pwd)
TMP=$(mktemp -d)
MOUNTS=()
cleanup() {
    for m in "${MOUNTS[@]}"; do umount "$m" 2>/dev/null; done
    chmod -R u+w "$TMP" 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT

# OpenBLAS and OpenMP reserve address space per thread: one thread each
# keeps the limit the same on a machine of 2 cores or 64.
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MALLOC_ARENA_MAX=2
LIMIT_KB=$((4 * 1024 * 1024))
# AddressSanitizer reserves terabytes of address space for its shadow
# memory at start-up, so an ASan build (make check SAN=1) runs without the
# limit, and the two cases that only the limit refuses are left out there.
# A program that stops with an error exits without freeing what it
# holds, by design, so LeakSanitizer's report at exit is switched off
# (the fuzz harnesses check the loaders' own error paths for leaks).
ASAN=0
if grep -qa __asan_init "$BIN/ch1"; then
    ASAN=1
    export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
fi
passed=0 failed=0
declare -A by_prog by_cat

# the rule for an error line's width
# shellcheck source=tests/error_width.sh
. "$ROOT/tests/error_width.sh"

# bad CATEGORY STATUS TEXT PROG ARGS...: runs $BIN/PROG ARGS under the
# limits; it must exit with STATUS and write one line on stderr holding
# TEXT. (FSIZE, when set, is a ulimit -f in blocks for the run; STDOUT
# where its standard output goes, /dev/null unless set. QUICK=1: the
# refusal must come before the work, within 2 seconds and with nothing on
# standard output, for an output that was checked only after the work.)
bad() {
    local cat=$1 want=$2 text=$3 prog=$4 out=${STDOUT:-/dev/null}
    shift 4
    by_prog[$prog]=$((${by_prog[$prog]:-0} + 1))
    by_cat[$cat]=$((${by_cat[$cat]:-0} + 1))
    [ -n "${QUICK:-}" ] && out=$TMP/quick.out
    local t0
    t0=$(date +%s%N)
    # stdout is not checked; stderr goes through a pipe, which a file size
    # limit does not stop
    (
        [ "$ASAN" = 1 ] || ulimit -v "$LIMIT_KB"
        if [ -n "${FSIZE:-}" ]; then trap '' XFSZ; ulimit -f "$FSIZE"; fi
        exec timeout 20 "$BIN/$prog" "$@" 2>&1 >"$out" </dev/null
    ) | cat >"$TMP/err"
    local rc=${PIPESTATUS[0]} why="" wide
    local ms=$((($(date +%s%N) - t0) / 1000000))
    if [ "$rc" != "$want" ]; then
        why="exit status $rc, expected $want"
        [ "$rc" = 124 ] && why="$why (timed out after 20 s)"
        [ "$rc" -gt 128 ] && why="$why (signal $((rc - 128)))"
    elif [ "$(wc -l <"$TMP/err")" != 1 ]; then
        why="expected one line on stderr, got $(wc -l <"$TMP/err")"
    elif ! grep -qF -- "$text" "$TMP/err"; then
        why="stderr lacks '$text'"
    elif [ -n "${QUICK:-}" ] && { [ -s "$out" ] || [ "$ms" -gt 2000 ]; }; then
        why="not refused before the work ($ms ms, $(wc -l <"$out") lines"
        why="$why on stdout)"
    elif wide=$(error_too_wide "$TMP/err" "$@"); then
        why="the error is $wide wide, more than 80"
    fi
    if [ -z "$why" ]; then
        passed=$((passed + 1))
        return
    fi
    failed=$((failed + 1))
    local cmd="$prog $*"
    [ ${#cmd} -gt 300 ] && cmd="${cmd:0:300}..."
    echo "FAIL [$cat] $cmd: $why" >&2
    sed 's/^/    stderr: /' "$TMP/err" | head -n 5 >&2
}

# ---- fixtures ---------------------------------------------------------------

D=$TMP/files
mkdir -p "$D/dir"
: >"$D/empty"
printf 'x' >"$D/one"
printf 'To be\xff or not' >"$D/badutf8"
printf 'abcdefghij' >"$D/short"
printf 'no line end in this text, only spaces and letters' >"$D/nonl"
BINARY=/bin/ls
[ -f "$BINARY" ] || BINARY=$BIN/ch1
# more distinct characters (CJK and on) than a V x V bigram table affords
# (printf's \u needs a UTF-8 locale; without one the case is left out)
wide=$(printf '\\u%04x' $(seq 19968 49967))
LC_ALL=C.UTF-8 printf '%b%b' "$wide" "$wide" >"$D/wide" 2>/dev/null
[ "$(wc -c <"$D/wide")" = 180000 ] || rm -f "$D/wide"

# tiny models, so that a run takes a moment
m5=(--layers 1 --heads 2 --embd 16 --block 16)
t6=(--layers 1 --heads 1 --embd 8 --block 8 --batch 2 --eval-iters 1
    --sample-chars 0 --quiet --threads 1)
t7=(--embd 8 --ffn 8 --heads 1 --layers 1 --held-out 10 --show 1
    --quiet --threads 1)
mt=(--task translate --merges 200 --embd 8 --ffn 8 --heads 1 --layers 1
    --batch-tokens 500 --beam 1 --show 0 --quiet --threads 1)
r6=(--quiet --sample-chars 0 --eval-iters 1 --threads 1)
r7=(--quiet --beam 1 --show 0 --threads 1)

fixture() {   # runs a valid command that makes a fixture; stops if it fails
    if ! "$@" >"$TMP/out" 2>"$TMP/err"; then
        echo "bad inputs: the fixture '$*' failed:" >&2
        cat "$TMP/err" >&2
        exit 1
    fi
}
fixture "$BIN/ch5" "${m5[@]}" --tokens 1 --sample-only --save "$D/m5.st"
fixture "$BIN/ch6" "${t6[@]}" --steps 2 --out "$D/run6"
fixture "$BIN/ch6" "${t6[@]}" --steps 4 --out "$D/run6b"
fixture "$BIN/ch6" "${t6[@]}" --steps 2 --embd 16 --out "$D/run6c"
fixture "$BIN/ch7" "${mt[@]}" --steps 2 --out "$D/run7" --save "$D/mt.st"
fixture "$BIN/ch7" "${t7[@]}" --steps 2 --save "$D/rev.st"

# head -c N of FILE into OUT
cut_at() { head -c "$2" "$1" >"$3"; }
# the size of a safetensors file's header (its first 8 bytes, little-endian)
header_size() { od -An -tu8 -N8 "$1" | tr -d ' '; }
# edit_header FILE OLD NEW OUT: FILE with the text OLD of its header
# replaced by NEW, of the same length (so the header's size stays true)
edit_header() {
    [ "${#2}" = "${#3}" ] || { echo "edit_header: lengths differ" >&2; exit 1; }
    local old new
    old=$(printf '%s' "$2" | sed 's/[][\.*^$/]/\\&/g')
    new=$(printf '%s' "$3" | sed 's/[\/&]/\\&/g')
    LC_ALL=C sed "s/$old/$new/" "$1" >"$4"
    cmp -s "$1" "$4" && { echo "edit_header: '$2' not in $1" >&2; exit 1; }
}

# ---- outputs that cannot be written ------------------------------------------
#
# A read-only folder and a full disk: small tmpfs mounts (root can write
# into a chmod 555 folder, so that alone tests nothing as root). Without
# mount: chmod 555 and a file size limit (ulimit -f) instead.
RO=$TMP/ro FULL=$TMP/full
mkdir -p "$RO" "$FULL"
FULL_FSIZE=""
# (BAD_INPUTS_NO_MOUNT=1 takes the second way, to test it.)
if [ -z "${BAD_INPUTS_NO_MOUNT:-}" ] \
   && mount -t tmpfs -o size=256k tmpfs "$RO" 2>/dev/null; then
    MOUNTS+=("$RO")
    mount -o remount,ro "$RO"
    mount -t tmpfs -o size=256k tmpfs "$FULL" && MOUNTS+=("$FULL")
    dd if=/dev/zero of="$FULL/filler" bs=4k 2>/dev/null   # until it is full
    NOSPACE="No space left on device"
else
    echo "bad inputs: cannot mount (not root): read-only is chmod 555, a" \
         "full disk is ulimit -f"
    chmod 555 "$RO"
    FULL_FSIZE=0   # no byte may be written to a file
    NOSPACE="File too large"
fi
# /dev/full, or (as root) a node of the same device in our folder: a
# program that renames a file over it then replaces only our copy
DEVFULL=/dev/full
if [ "$(id -u)" = 0 ] && mknod "$TMP/devfull" c 1 7 2>/dev/null; then
    DEVFULL=$TMP/devfull
fi

# ---- ch1: data preparation ---------------------------------------------------

bad flag 2 "unknown flag '--blocks'" ch1 --blocks 8
bad flag 2 "--block needs a value" ch1 --block
bad flag 2 "--batch expects an integer, got 'four'" ch1 --batch four
bad range 2 "--batch must be in [1, 64], got -1" ch1 --batch -1
bad range 2 "--batch must be in [1, 64], got 100000000" ch1 --batch 100000000
bad range 2 "--block must be in [1, 4096], got 0" ch1 --block 0
bad range 2 "--block must be in [1, 4096], got 100000" ch1 --block 100000
bad range 2 "--seed expects a non-negative integer, got '-1'" ch1 --seed -1
bad real 2 "--alpha expects a finite number, got 'nan'" ch1 --alpha nan
bad real 2 "--alpha expects a finite number, got 'inf'" ch1 --alpha inf
bad real 2 "--alpha expects a finite number, got '-inf'" ch1 --alpha -inf
bad real 2 "--alpha expects a finite number, got '1e40'" ch1 --alpha 1e40
bad real 2 "--alpha must be in [" ch1 --alpha -1
bad file 1 "cannot open $D/none" ch1 --data "$D/none"
bad file 1 "cannot read $D/dir: Is a directory" ch1 --data "$D/dir"
bad file 1 "$D/empty: needs at least 2 characters, has 0" ch1 --data "$D/empty"
bad file 1 "$D/one: needs at least 2 characters, has 1" ch1 --data "$D/one"
bad file 1 "$BINARY: a NUL byte (U+0000) at byte offset" ch1 --data "$BINARY"
bad file 1 "$D/badutf8: invalid UTF-8 at byte 5" ch1 --data \
    "$D/badutf8"
bad file 2 "$D/short is too short for --block 64" ch1 --data "$D/short" \
    --block 64
bad flag 2 "--text: invalid UTF-8" ch1 --text "$(printf 'a\xffb')"
# (a table of 7 GB: refused under the limit only)
if [ -f "$D/wide" ] && [ "$ASAN" = 0 ]; then
    bad size 2 "MiB (ulimit -v 4096): --data has 30000 distinct characters" \
        ch1 --data "$D/wide"
fi

# ---- ch2 .. ch4: examples on made-up inputs (flags only) ---------------------

bad flag 2 "unknown flag '--channel'" ch2 --channel 8
bad flag 2 "--heads needs a value" ch2 --heads
bad flag 2 "--T expects an integer, got '1e3'" ch2 --T 1e3
bad range 2 "--T must be in [1, 32], got -1" ch2 --T -1
bad range 2 "--heads must be in [1, 1024], got 0" ch2 --heads 0
bad range 2 "--channels must be in [1, 1024], got 1000000" ch2 --channels \
    1000000
bad range 2 "--max-T must be in [64, 4096], got 100000000" ch2 --max-T \
    100000000
bad flag 2 "--text: invalid UTF-8 at byte 2" ch2 \
    --text "$(printf 'ab\xffcd')"

bad flag 2 "unknown flag '--gelus'" ch3 --gelus tanh
bad flag 2 "--dropout needs a value" ch3 --dropout
bad flag 2 "--channels expects an integer, got '0x10'" ch3 --channels 0x10
bad range 2 "--channels must be in [1, 1024], got 0" ch3 --channels 0
bad range 2 "--ff must be in [1, 16384], got -4" ch3 --ff -4
bad range 2 "--max-T must be in [64, 2048], got 100000000" ch3 --max-T \
    100000000
bad real 2 "--dropout expects a finite number, got 'nan'" ch3 --dropout nan
bad real 2 "--dropout expects a finite number, got '-inf'" ch3 --dropout -inf
bad real 2 "--dropout expects a finite number, got '1e40'" ch3 --dropout 1e40
bad real 2 "--dropout must be in [0, 0.99], got -0.1" ch3 --dropout -0.1

bad flag 2 "unknown flag '--depth'" ch4 --depth 2
bad flag 2 "--depths needs a value" ch4 --depths
bad flag 2 "--channels expects an integer, got 'sixty'" ch4 --channels sixty
bad flag 2 "--depths takes up to 8 numbers" ch4 --depths 2,,6
bad range 2 "--depths takes up to 8 numbers" ch4 --depths -2
bad range 2 "--depths takes up to 8 numbers" ch4 --depths \
    99999999999999999999
bad range 2 "--heads must be in [1, 1024], got 100000000" ch4 --heads \
    100000000
bad range 2 "--channels must be in [1, 1024], got 0" ch4 --channels 0

# ---- ch5: the GPT, its checkpoints and generation ----------------------------

bad flag 2 "unknown flag '--top_k'" ch5 --top_k 3
bad flag 2 "--checkpoint needs a value" ch5 --checkpoint
bad flag 2 "--tokens expects an integer, got 'many'" ch5 --tokens many
bad range 2 "--tokens must be in [0, 100000], got -5" ch5 --tokens -5
bad range 2 "--layers must be in [1, 4096], got 100000" ch5 --layers 100000
bad range 2 "--embd must be in [1, 65536], got 1000000" ch5 --embd 1000000
bad range 2 "--block must be in [1, " ch5 --block 0
bad range 2 "--heads must be in [1, 65536], got 0" ch5 --heads 0
bad size 2 "model config: too large: n_embd x block_size 268435456 >" \
    ch5 --block 65536 --embd 4096
bad size 2 "model config: too large: n_embd x n_ffn 1073741824 >" ch5 \
    --embd 16384
bad size 2 "lower --layers --embd --block" ch5 --layers 4096 \
    --embd 4096
bad real 2 "--temperature expects a finite number, got 'nan'" ch5 \
    --temperature nan
bad real 2 "--temperature expects a finite number, got 'inf'" ch5 \
    --temperature inf
bad real 2 "--top-p expects a finite number, got '-inf'" ch5 --top-p -inf
bad real 2 "--dropout expects a finite number, got '1e40'" ch5 --dropout 1e40
bad real 2 "--temperature must be in [0, 1e+30], got -1" ch5 --temperature -1
bad real 2 "--top-p must be in [1e-30, 1], got 1.5" ch5 --top-p 1.5
bad file 1 "cannot open $D/none" ch5 --checkpoint "$D/none"
bad file 1 "cannot read $D/dir: Is a directory" ch5 --checkpoint "$D/dir"
bad file 1 "$D/empty: 0 bytes is too short for a safetensors file" ch5 \
    --checkpoint "$D/empty"
bad file 1 "$D/one: 1 bytes is too short for a safetensors file" ch5 \
    --checkpoint "$D/one"
bad file 1 "$BINARY is not a safetensors file" ch5 --checkpoint "$BINARY"
bad file 1 "$D/nonl is not a safetensors file (its first 8 bytes are no" \
    ch5 --checkpoint "$D/nonl"
bad file 1 "$D/badutf8 is not a safetensors file" ch5 --checkpoint "$D/badutf8"
bad file 1 "cannot read $D/dir: Is a directory" ch5 --data "$D/dir"
bad file 1 "$D/one: needs at least 2 characters, has 1" ch5 --data "$D/one"
bad file 1 "$BINARY: invalid UTF-8" ch5 --score-file "$BINARY"
bad file 1 "$D/badutf8: invalid UTF-8 at byte 5" ch5 --score-file \
    "$D/badutf8"
bad file 1 "$D/empty: the text has 0 characters; scoring needs at least 2" \
    ch5 --score-file "$D/empty"
bad file 1 "$D/one: the text has 1 character; scoring needs at least 2" \
    ch5 --score-file "$D/one"
bad file 1 "cannot read $D/dir: Is a directory" ch5 --score-file "$D/dir"
# a checkpoint cut short: 8 bytes, inside the header, inside the data,
# one byte short
h5=$(header_size "$D/m5.st") s5=$(stat -c %s "$D/m5.st")
for n in 8 $((8 + h5 / 2)) $((8 + h5 + (s5 - 8 - h5) / 2)) $((s5 - 1)); do
    cut_at "$D/m5.st" "$n" "$D/m5.cut$n"
    bad ckpt 1 "$D/m5.cut$n: " ch5 --checkpoint "$D/m5.cut$n" --sample-only
done
# a header that disagrees with its tensors
edit_header "$D/m5.st" '\"n_layer\": 1' '\"n_layer\": 2' "$D/m5.layers"
bad ckpt 1 "tensor transformer.h.1.ln_1.weight is missing" ch5 \
    --checkpoint "$D/m5.layers" --sample-only
edit_header "$D/m5.st" '\"block_size\": 16' '\"block_size\": 99' \
    "$D/m5.block"
bad ckpt 1 "tensor transformer.wpe.weight has shape [16, 16], the config \
needs [99, 16]" ch5 --checkpoint "$D/m5.block" --sample-only
edit_header "$D/m5.st" '"shape":[65,16]' '"shape":[65,61]' "$D/m5.shape"
bad ckpt 1 "shape [65, 61] F32 needs 15860 bytes, data_offsets give 4160" \
    ch5 --checkpoint "$D/m5.shape" --sample-only
# another model's checkpoint: chapter 7's, and chapter 6's optimiser state
bad ckpt 1 "$D/mt.st is chapter 7's encoder-decoder, not a GPT (./ch7" ch5 \
    --checkpoint "$D/mt.st" --sample-only
bad ckpt 1 "no \"config\" in the metadata; is this a chapter 5 checkpoint?" \
    ch5 --checkpoint "$D/run6/state-2.safetensors" --sample-only
# a text without line ends: the default prompt "\n" is not blamed, the
# run goes on to fail where it saves (on a full disk, which no check
# before the work can foresee)
FSIZE=$FULL_FSIZE bad out 1 "$NOSPACE" ch5 --data "$D/nonl" "${m5[@]}" \
    --tokens 1 --save "$FULL/nonl.st"
# where the model cannot be written: refused before the model is made
# and writes (a folder under a regular file stops root as well)
QUICK=1 bad out 1 "cannot save $RO/m.st: cannot create a temporary file \
there" ch5 "${m5[@]}" --tokens 1000 --save "$RO/m.st"
QUICK=1 bad out 1 "cannot save $D/one/m.st: cannot create a temporary file \
there: Not a directory" ch5 "${m5[@]}" --tokens 1000 --save "$D/one/m.st"
FSIZE=$FULL_FSIZE bad out 1 "$NOSPACE" ch5 "${m5[@]}" --tokens 1 \
    --sample-only --save "$FULL/m.st"
QUICK=1 bad out 1 "cannot save $DEVFULL: a device or other special file" \
    ch5 "${m5[@]}" --tokens 1 --sample-only --save "$DEVFULL"
QUICK=1 bad out 1 "cannot save $D/dir: it is a folder; give a file name" \
    ch5 "${m5[@]}" --tokens 1 --sample-only --save "$D/dir"

# ---- ch6: training -----------------------------------------------------------

bad flag 2 "unknown flag '--learning-rate'" ch6 --learning-rate 1e-3
bad flag 2 "--out needs a value" ch6 --out
bad flag 2 "--steps expects an integer, got '1e3'" ch6 --steps 1e3
bad range 2 "--batch must be in [1, 1e+09], got -2" ch6 --batch -2
bad range 2 "--eval-iters must be in [1, 10000], got 0" ch6 --eval-iters 0
bad range 2 "--sample-chars must be in [0, 100000], got 1000000000" ch6 \
    --sample-chars 1000000000
bad size 2 "lower --batch --block --embd --layers" ch6 "${t6[@]}" \
    --batch 100000000 --steps 1
bad size 2 "lower --batch --block --embd --layers" ch6 "${t6[@]}" \
    --block 65536 --batch 64 --steps 1
bad size 2 "model config: too large: n_layer 100000 > 4096" ch6 "${t6[@]}" \
    --layers 100000
bad size 2 "model config: too large: n_embd 1000000 > 65536" ch6 "${t6[@]}" \
    --embd 1000000
bad size 2 "model config: n_embd=8 does not split into n_head=1000000000" \
    ch6 "${t6[@]}" --heads 1000000000
# a step count the flags allow: nothing is allocated per step ahead (the
# run stops after its first step, every loss being under 100, and fails
# to save on the full disk)
FSIZE=$FULL_FSIZE bad size 1 "$NOSPACE" ch6 "${t6[@]}" --steps 1000000000 \
    --eval-every 1 --stop-at-val 100 --out "$FULL/long"
bad real 2 "--lr expects a finite number, got 'nan'" ch6 --lr nan
bad real 2 "--dropout expects a finite number, got 'inf'" ch6 --dropout inf
bad real 2 "--beta2 expects a finite number, got '-inf'" ch6 --beta2 -inf
bad real 2 "--weight-decay expects a finite number, got '1e40'" ch6 \
    --weight-decay 1e40
bad real 2 "--beta1 must be in [0, 0.999999], got 1" ch6 --beta1 1
bad real 2 "--min-lr must be in [0, 1e+30], got -1e-05" ch6 --min-lr -1e-5
bad file 1 "cannot open $D/none" ch6 "${t6[@]}" --steps 1 --data "$D/none"
bad file 1 "cannot read $D/dir: Is a directory" ch6 "${t6[@]}" --steps 1 \
    --data "$D/dir"
bad file 1 "$D/empty: needs at least 2 characters, has 0" ch6 "${t6[@]}" \
    --steps 1 --data "$D/empty"
bad file 1 "$BINARY: a NUL byte (U+0000)" ch6 "${t6[@]}" --steps 1 \
    --data "$BINARY"
bad file 1 "$D/badutf8: invalid UTF-8" ch6 "${t6[@]}" --steps 1 --data \
    "$D/badutf8"
bad file 2 "$D/short is too short for --block 8: train 9 tokens, val 1" ch6 "${t6[@]}" --steps 1 --data "$D/short"
# resuming: an empty or half-written folder
R=$TMP/resume6
mkdir -p "$R/empty" "$R/model" "$R/state" "$R/other" "$R/mixed" "$R/ch7"
cp "$D/run6/model.safetensors" "$R/model/"
cp "$D/run6/state-2.safetensors" "$R/state/"
cp "$D/run6/model.safetensors" "$R/other/"
cp "$D/run6b/state-4.safetensors" "$R/other/"
cp "$D/run6/model.safetensors" "$R/mixed/"
cp "$D/run6b/state-4.safetensors" "$R/mixed/state-2.safetensors"
cp "$D/run7/"* "$R/ch7/"
bad resume 1 "cannot open $R/empty/model.safetensors" ch6 --resume \
    "$R/empty" "${r6[@]}"
bad resume 1 "cannot open $R/model/state-2.safetensors" ch6 --resume \
    "$R/model" "${r6[@]}"
bad resume 1 "cannot open $R/state/model.safetensors" ch6 --resume \
    "$R/state" "${r6[@]}"
bad resume 1 "cannot open $R/other/state-2.safetensors" ch6 --resume \
    "$R/other" "${r6[@]}"
bad resume 1 "$R/mixed/state-2.safetensors: holds step 4, the model step 2" \
    ch6 --resume "$R/mixed" "${r6[@]}"
bad resume 1 "is chapter 7's encoder-decoder, not a GPT" ch6 --resume \
    "$R/ch7" "${r6[@]}"
# the saved run's files damaged
for what in model state; do
    f=model.safetensors
    [ $what = state ] && f=state-2.safetensors
    h=$(header_size "$D/run6/$f") s=$(stat -c %s "$D/run6/$f")
    for n in 8 $((8 + h / 2)) $((8 + h + (s - 8 - h) / 2)) $((s - 1)); do
        mkdir -p "$R/cut-$what-$n"
        cp "$D/run6/"* "$R/cut-$what-$n/"
        cut_at "$D/run6/$f" "$n" "$R/cut-$what-$n/$f"
        bad ckpt 1 "$R/cut-$what-$n/$f: " ch6 --resume "$R/cut-$what-$n" \
            "${r6[@]}"
    done
done
mkdir -p "$R/beta" "$R/shape"
cp "$D/run6/model.safetensors" "$R/beta/"
edit_header "$D/run6/state-2.safetensors" '\"beta2\": 0.99' \
    '\"beta2\": 1.99' "$R/beta/state-2.safetensors"
bad ckpt 1 "train_state \"beta2\" must be in [0, 0.999999], got 1.99" ch6 \
    --resume "$R/beta" "${r6[@]}"
cp "$D/run6/model.safetensors" "$D/run6c/state-2.safetensors" "$R/shape/"
bad ckpt 1 "state-2.safetensors: tensor \"adamw.m\": shape [" ch6 \
    --resume "$R/shape" "${r6[@]}"
# a saved run too large for the machine: refused from its files' headers,
# before they are read (its state says batch 100000000; the lr's digits
# make the room)
mkdir -p "$R/huge"
cp "$D/run6/model.safetensors" "$R/huge/"
edit_header "$D/run6/state-2.safetensors" \
    '\"batch\": 2, \"steps\": 2, \"lr\": 0.00200000009' \
    '\"batch\": 100000000, \"steps\": 2, \"lr\": 0.002' \
    "$R/huge/state-2.safetensors"
QUICK=1 bad size 2 "the saved run is too large here" ch6 --resume "$R/huge" \
    "${r6[@]}"
# where the run cannot be written
bad out 1 "cannot save checkpoints in $RO/run: " ch6 "${t6[@]}" --steps 1 \
    --out "$RO/run"
FSIZE=$FULL_FSIZE bad out 1 "$NOSPACE" ch6 "${t6[@]}" --steps 1 \
    --out "$FULL/run"
bad out 1 "cannot save checkpoints in $DEVFULL: not a folder" ch6 \
    "${t6[@]}" --steps 1 --out "$DEVFULL"
bad out 1 "--log $RO/log.csv: cannot write it: " ch6 "${t6[@]}" --steps 1 \
    --log "$RO/log.csv"
FSIZE=$FULL_FSIZE bad out 1 "--log $FULL/log.csv: cannot write it: $NOSPACE" \
    ch6 "${t6[@]}" --steps 1 --log "$FULL/log.csv"
bad out 1 "--log $DEVFULL: cannot write it: No space left on device" ch6 \
    "${t6[@]}" --steps 1 --log "$DEVFULL"

# ---- ch7: the encoder-decoder and translation --------------------------------

bad flag 2 "unknown flag '--symbol'" ch7 --symbol 4
bad flag 2 "--beam needs a value" ch7 --beam
bad flag 2 "--embd expects an integer, got '32.5'" ch7 --embd 32.5
bad range 2 "--batch must be in [1, 65536], got 100000000" ch7 --batch \
    100000000
bad range 2 "--layers must be in [1, 64], got 100000" ch7 --layers 100000
bad range 2 "2 possible strings, fewer than 4 x --held-out 100" ch7 \
    --symbols 1 --min-len 1 --max-len 2 --held-out 100
bad range 2 "--embd must be in [1, 4096], got 1000000" ch7 --embd 1000000
bad range 2 "--steps must be in [1, 1e+07], got 0" ch7 --steps 0
bad range 2 "--held-out must be in [1, 100000], got -1" ch7 --held-out -1
bad range 2 "--batch-tokens must be in [16, 1e+07], got 0" ch7 \
    --task translate --batch-tokens 0
bad range 2 "--max-len must be in [2, 1024], got 100000" ch7 \
    --task translate --max-len 100000
bad size 2 "model config: too large: n_embd x n_ffn 268435456 >" ch7 \
    "${t7[@]}" --embd 4096 --ffn 65536
# (4.5 GiB: refused under the limit only)
[ "$ASAN" = 1 ] || bad size 2 "lower --batch --embd" ch7 --held-out 100000 \
    --symbols 26 --steps 1 --quiet --threads 1
bad real 2 "--lr expects a finite number, got 'nan'" ch7 --lr nan
bad real 2 "--alpha expects a finite number, got 'inf'" ch7 --alpha inf
bad real 2 "--smoothing expects a finite number, got '-inf'" ch7 \
    --smoothing -inf
bad real 2 "--dropout expects a finite number, got '1e40'" ch7 --dropout 1e40
bad real 2 "--lr must be in [1e-30, 1], got 2" ch7 --task translate --lr 2
# ./ch7 --bleu HYP REF
bad file 1 "cannot open $D/none" ch7 --bleu "$D/none" "$D/one"
bad file 1 "cannot read $D/dir: Is a directory" ch7 --bleu "$D/one" "$D/dir"
bad file 1 "$D/empty and $D/empty are empty: nothing to score" ch7 --bleu \
    "$D/empty" "$D/empty"
bad file 1 "$BINARY: holds a NUL byte" ch7 --bleu "$BINARY" "$D/one"
bad file 1 "reference 1: invalid UTF-8" ch7 --bleu "$D/one" "$D/badutf8"
# --checkpoint and --translate-file
bad flag 2 "--checkpoint needs --translate or --translate-file" ch7 \
    --checkpoint "$D/mt.st"
bad flag 2 "--translate is empty" ch7 --checkpoint "$D/mt.st" --translate ''
bad file 1 "cannot open $D/none" ch7 --checkpoint "$D/none" --translate x
bad file 1 "cannot read $D/dir: Is a directory" ch7 --checkpoint "$D/dir" \
    --translate x
bad file 1 "$D/empty: 0 bytes is too short" ch7 --checkpoint "$D/empty" \
    --translate x
bad file 1 "$BINARY is not a safetensors file" ch7 --checkpoint "$BINARY" \
    --translate x
bad file 1 "$D/nonl is not a safetensors file" ch7 --checkpoint "$D/nonl" \
    --translate x
bad file 1 "$D/empty is empty: no sentence to translate" ch7 --checkpoint \
    "$D/mt.st" --translate-file "$D/empty"
bad file 1 "cannot read $D/dir: Is a directory" ch7 --checkpoint "$D/mt.st" \
    --translate-file "$D/dir"
bad file 1 "$BINARY, line 1: invalid UTF-8" ch7 --checkpoint "$D/mt.st" \
    --translate-file "$BINARY"
bad file 1 "$D/badutf8, line 1: invalid UTF-8 at byte 5" ch7 \
    --checkpoint "$D/mt.st" --translate-file "$D/badutf8"
bad file 1 "--translate, line 1: " ch7 --checkpoint "$D/mt.st" --translate \
    "$(head -c 3000 "$ROOT/data/multi30k/train.de" | tr '\n' ' ')"
h7=$(header_size "$D/mt.st") s7=$(stat -c %s "$D/mt.st")
for n in 8 $((8 + h7 / 2)) $((8 + h7 + (s7 - 8 - h7) / 2)) $((s7 - 1)); do
    cut_at "$D/mt.st" "$n" "$D/mt.cut$n"
    bad ckpt 1 "$D/mt.cut$n: " ch7 --checkpoint "$D/mt.cut$n" --translate x
done
bad ckpt 1 "$D/m5.st is a GPT for ./ch5 and ./ch6, not an encoder-decoder" ch7 \
    --checkpoint "$D/m5.st" --translate x
bad ckpt 1 "$D/rev.st: not a translation model (no BPE tokenizer in it)" ch7 --checkpoint \
    "$D/rev.st" --translate x
bad ckpt 1 "no \"config\" in the metadata; is this a chapter 7 checkpoint?" \
    ch7 --checkpoint "$D/run7/state-2.safetensors" --translate x
edit_header "$D/mt.st" '\"n_enc\": 1' '\"n_enc\": 2' "$D/mt.layers"
bad ckpt 1 "$D/mt.layers: " ch7 --checkpoint "$D/mt.layers" --translate x
# the corpus folder: missing, a file, empty, binary, invalid UTF-8, an
# empty split, files that are not line by line translations
C=$TMP/corpus
corpus() {   # a copy of Multi30k in $C/$1
    mkdir -p "$C/$1"
    cp "$ROOT/data/multi30k/"*.de "$ROOT/data/multi30k/"*.en "$C/$1/"
}
bad file 1 "cannot open $D/none/train.de: No such file or directory" ch7 \
    "${mt[@]}" --steps 1 --data "$D/none"
bad file 1 "cannot open $BINARY/train.de: Not a directory" ch7 "${mt[@]}" \
    --steps 1 --data "$BINARY"
corpus empty; : >"$C/empty/train.de"; : >"$C/empty/train.en"
bad file 1 "no character to learn from: the texts are empty" ch7 \
    "${mt[@]}" --steps 1 --data "$C/empty"
corpus binary; cp "$BINARY" "$C/binary/train.de"
bad file 1 "$C/binary/train.de, line 1 holds a NUL byte" ch7 "${mt[@]}" \
    --steps 1 --data "$C/binary"
corpus utf8; printf 'caf\xff\n' >>"$C/utf8/train.en"
printf 'x\n' >>"$C/utf8/train.de"
bad file 1 "$C/utf8/train.en, line 29001: invalid UTF-8" ch7 "${mt[@]}" \
    --steps 1 --data "$C/utf8"
corpus noval; : >"$C/noval/val.de"; : >"$C/noval/val.en"
bad file 1 "$C/noval/val.de and $C/noval/val.en hold no sentence pair" ch7 \
    "${mt[@]}" --steps 1 --data "$C/noval"
corpus notest; : >"$C/notest/test_2016_flickr.de"
: >"$C/notest/test_2016_flickr.en"
bad file 1 "test_2016_flickr.en hold no sentence pair" ch7 "${mt[@]}" \
    --steps 1 --data "$C/notest"
corpus lines; head -n 5 "$ROOT/data/multi30k/val.en" >"$C/lines/val.en"
bad file 1 "val.en has 5: they must pair line by line" ch7 \
    "${mt[@]}" --steps 1 --data "$C/lines"
grep -qF -- "--max-len" "$TMP/err" && {
    failed=$((failed + 1)); echo "FAIL ch7: a line count blames --max-len" >&2
}
# (a tokenizer of 2 characters makes the val sentences long: an --max-len
# given that cannot hold them is an error; not given, it would grow)
corpus short; printf 'x' >"$C/short/train.de"; printf 'y' >"$C/short/train.en"
bad file 1 "more than 100 tokens: max_len cannot hold it (--max-len sets it)" \
    ch7 "${mt[@]}" --steps 1 --data "$C/short" --max-len 100
# resuming: an empty or half-written folder, another run's files
R=$TMP/resume7
mkdir -p "$R/empty" "$R/model" "$R/state" "$R/json" "$R/other" "$R/ch6" \
    "$R/badjson" "$R/range"
cp "$D/run7/model.safetensors" "$D/run7/translate.json" "$R/model/"
cp "$D/run7/state-2.safetensors" "$D/run7/translate.json" "$R/state/"
cp "$D/run7/model.safetensors" "$D/run7/state-2.safetensors" "$R/json/"
cp "$D/run7/model.safetensors" "$D/run7/translate.json" "$R/other/"
cp "$D/run7/state-2.safetensors" "$R/other/state-3.safetensors"
cp "$D/run6/"* "$D/run7/translate.json" "$R/ch6/"
cp "$D/run7/"* "$R/badjson/"
printf '{"data": ' >"$R/badjson/translate.json"
cp "$D/run7/"* "$R/range/"
sed 's/"batch_tokens": 500/"batch_tokens": 100000000/' \
    "$D/run7/translate.json" >"$R/range/translate.json"
bad resume 1 "cannot open $R/empty/translate.json" ch7 \
    --resume "$R/empty" "${r7[@]}"
bad resume 1 "cannot open $R/model/state-2.safetensors" ch7 --resume \
    "$R/model" "${r7[@]}"
bad resume 1 "cannot open $R/state/model.safetensors" ch7 --resume \
    "$R/state" "${r7[@]}"
bad resume 1 "cannot open $R/json/translate.json" ch7 --resume "$R/json" \
    "${r7[@]}"
bad resume 1 "cannot open $R/other/state-2.safetensors" ch7 --resume \
    "$R/other" "${r7[@]}"
bad resume 1 "$R/ch6/model.safetensors is a GPT for ./ch5 and ./ch6" ch7 \
    --resume "$R/ch6" "${r7[@]}"
bad resume 1 "$R/badjson/translate.json: JSON: unexpected end of input" ch7 \
    --resume "$R/badjson" "${r7[@]}"
bad resume 1 "batch_tokens, smoothing or epochs missing or out of range" ch7 \
    --resume "$R/range" "${r7[@]}"
for f in model.safetensors state-2.safetensors; do
    s=$(stat -c %s "$D/run7/$f")
    for n in 8 $((s - 1)); do
        mkdir -p "$R/cut-$f-$n"
        cp "$D/run7/"* "$R/cut-$f-$n/"
        cut_at "$D/run7/$f" "$n" "$R/cut-$f-$n/$f"
        bad ckpt 1 "$R/cut-$f-$n/$f: " ch7 --resume "$R/cut-$f-$n" "${r7[@]}"
    done
done
# where the model and the run cannot be written: --save is refused before
# the training (which here would go on past the time limit)
QUICK=1 bad out 1 "cannot save $RO/m.st: cannot create a temporary file \
there" ch7 "${t7[@]}" --steps 1000000 --until-perfect=0 --save "$RO/m.st"
QUICK=1 bad out 1 "cannot save $D/one/m.st: cannot create a temporary file \
there: Not a directory" ch7 "${t7[@]}" --steps 1000000 --until-perfect=0 \
    --save "$D/one/m.st"
QUICK=1 bad out 1 "cannot save $RO/mt.st: cannot create a temporary file \
there" ch7 "${mt[@]}" --steps 1000000 --save "$RO/mt.st"
QUICK=1 bad out 1 "cannot save $D/one/mt.st: cannot create a temporary \
file there: Not a directory" ch7 "${mt[@]}" --steps 1000000 \
    --save "$D/one/mt.st"
FSIZE=$FULL_FSIZE bad out 1 "$NOSPACE" ch7 "${t7[@]}" --steps 1 \
    --save "$FULL/m.st"
QUICK=1 bad out 1 "cannot save $DEVFULL: a device or other special file" \
    ch7 "${t7[@]}" --steps 1000000 --until-perfect=0 --save "$DEVFULL"
bad out 1 "cannot save checkpoints in $RO/run: " ch7 "${mt[@]}" --steps 1 \
    --out "$RO/run"
FSIZE=$FULL_FSIZE bad out 1 "$NOSPACE" ch7 "${mt[@]}" --steps 1 \
    --out "$FULL/run"
bad out 1 "--log $DEVFULL: cannot write it: No space left on device" ch7 \
    "${mt[@]}" --steps 1 --log "$DEVFULL"
FSIZE=$FULL_FSIZE bad out 1 "--log $FULL/log.csv: cannot write it: $NOSPACE" \
    ch7 "${mt[@]}" --steps 1 --log "$FULL/log.csv"

# ---- ch8: the GPU (flags only: see the top) ---------------------------------
if [ -x "$BIN/ch8" ]; then
    bad flag 2 "unknown flag '--gpu'" ch8 --gpu
    bad flag 2 "--check is a switch: write --check=1" \
        ch8 --check 1
    bad flag 2 "--flash expects 0 or 1, got 'yes'" ch8 --flash=yes
    bad flag 2 "--tf32 and --bf16 both set the matrix products' precision" \
        ch8 --tf32 --bf16
    bad range 2 "--causal-block must be in [0, 65536], got 70000" ch8 \
        --causal-block 70000
    bad range 2 "--batch must be in [1, 1e+09], got 0" ch8 --batch 0
    bad range 2 "--eval-iters must be in [1, 10000], got 100000" ch8 \
        --eval-iters 100000
    bad real 2 "--lr expects a finite number, got 'nan'" ch8 --lr nan
    STDOUT=$DEVFULL bad out 1 "cannot write the output: No space left on \
device" ch8 --emulate
    # without a GPU, whatever training was asked for is refused, never
    # ended with status 0 as if it had run
    if ! nvidia-smi -L >/dev/null 2>&1; then
        bad gpu 1 "ch8: error: training needs a GPU: " ch8 "${t6[@]}" \
            --steps 5 --out "$TMP/d8"
        if [ -e "$TMP/d8" ]; then
            failed=$((failed + 1))
            echo "FAIL ch8: made its --out folder without a GPU" >&2
        fi
        bad gpu 1 "training needs a GPU: " ch8 --resume "$TMP/none"
        bad gpu 1 "training needs a GPU: " ch8 --layers 1000
    fi
fi

# ---- ch9: GPT-2 (the tiny GPT-2 of tests/reference/ch9_ft) ----------------
# OpenAI's weights are not here: a missing folder or file is a usage error
# (status 2) that says what is missing, and for data/gpt2 how to get it
g9=(--model "$ROOT/tests/reference/ch9_ft" --threads 1)
f9=(--finetune "${g9[@]}" --eval-iters 1 --sample-tokens 0 --quiet)
fixture "$BIN/ch9" "${f9[@]}" --steps 2 --out "$D/run9"
G=$D/gpt2   # a copy of the fixture's folder, to damage file by file
mkdir -p "$G"
cp -L "$ROOT"/tests/reference/ch9_ft/* "$G/"
copy9() {   # copy9 NAME: $D/NAME, a copy of $G
    rm -rf "${D:?}/$1" && cp -r "$G" "$D/$1"
}
bad flag 2 "unknown flag '--top_k'" ch9 --top_k 3
bad flag 2 "--prompt needs a value" ch9 --prompt
bad range 2 "--tokens must be in [0, 100000], got -1" ch9 --tokens -1
bad real 2 "--temperature expects a finite number, got 'nan'" ch9 \
    --temperature nan
bad flag 2 "--crop must be slide or exact, got 'wide'" ch9 "${g9[@]}" \
    --crop wide
bad flag 2 "--tokenize is empty" ch9 --tokenize ''
bad flag 2 "--tokenize and --decode: give one" ch9 --tokenize a --decode 1
(cd "$D" && bad file 2 "no GPT-2 files in data/gpt2: run make gpt2 (550 MB, \
needs a network)" ch9 --prompt Hi)
bad file 2 "$D/dir has no config.json: not a GPT-2 folder" ch9 --model \
    "$D/dir"
copy9 g9a && rm "$D/g9a/model.safetensors"
bad file 2 "$D/g9a has no model.safetensors" ch9 --model "$D/g9a"
copy9 g9b && rm "$D/g9b/merges.txt"
bad file 2 "$D/g9b has no merges.txt" ch9 --model "$D/g9b" --tokenize hi
copy9 g9c && cut_at "$G/model.safetensors" 1000 "$D/g9c/model.safetensors"
bad file 1 "$D/g9c/model.safetensors: " ch9 --model "$D/g9c"
copy9 g9d && printf '{"n_embd": 16}' >"$D/g9d/config.json"
bad file 1 "$D/g9d/config.json: " ch9 --model "$D/g9d"
copy9 g9e && printf '#version: 0.2\nnot-a-merge\n' >"$D/g9e/merges.txt"
bad file 1 "merges.txt" ch9 --model "$D/g9e" --tokenize hi
copy9 g9f && printf '{"a": 0}' >"$D/g9f/vocab.json"
bad file 1 "vocab.json" ch9 --model "$D/g9f"
bad file 1 "cannot open $D/none" ch9 --checkpoint "$D/none"
bad flag 2 "--checkpoint takes a file, not a folder" ch9 --checkpoint "$D/dir"
# chapter 6's checkpoint (characters) beside a tokenizer's files
mkdir -p "$D/c6" && cp "$D/run6/model.safetensors" "$G/vocab.json" \
    "$G/merges.txt" "$D/c6/"
bad ckpt 1 "a model of characters, not of GPT-2's tokens" ch9 \
    --checkpoint "$D/c6/model.safetensors"
bad ckpt 1 "its ids are gpt2 tokens, not characters (./ch9 reads it)" \
    ch5 --checkpoint "$D/run9/model.safetensors" --sample-only
bad range 2 "--decode: '2048' is no token id: the ids are 0 to 2047" ch9 \
    "${g9[@]}" --decode "12 2048"
bad range 2 "--decode: '-3' is no token id" ch9 "${g9[@]}" --decode "-3"
bad flag 2 "--decode: 'x' is no token id" ch9 "${g9[@]}" --decode "1 x"
# fine-tuning: chapter 6's checks, with the task's own
bad range 2 "--window must be in [1, 100000], got 0" ch9 "${f9[@]}" \
    --window 0
bad size 2 "--window 129 is longer than the model's block of 128 tokens" \
    ch9 "${f9[@]}" --window 129
bad flag 2 "unknown flag '--layers'" ch9 "${f9[@]}" --layers 2
bad flag 2 "unknown flag '--sample-chars'" ch9 "${f9[@]}" --sample-chars 1
bad file 2 "$D/short is too short for --window 64" ch9 "${f9[@]}" --data \
    "$D/short"
bad file 1 "cannot read $D/dir: Is a directory" ch9 "${f9[@]}" --data "$D/dir"
bad ckpt 1 "$D/run6 holds a run on characters; ./ch9 trains on gpt2 tokens" \
    ch9 --finetune --resume "$D/run6" --steps 3
bad ckpt 1 "$D/run9 holds a run on gpt2 tokens; ./ch6 trains on characters" \
    ch6 --resume "$D/run9" --steps 3
bad flag 2 "--model cannot change on --resume: the run in $D/run9 fixes it" \
    ch9 "${f9[@]}" --resume "$D/run9" --steps 3
rm -rf "$D/run9b" && cp -r "$D/run9" "$D/run9b" && rm "$D/run9b/vocab.json"
bad ckpt 1 "$D/run9b has no tokenizer: a run keeps a copy of vocab.json" \
    ch9 --finetune --resume "$D/run9b" \
    --steps 3 --quiet

# ---- every program: a report that cannot be written -------------------------
# Standard output on a full disk: the program must not end with status 0
# as if its report had been written.
for args in "ch1" "ch2 --max-T 64" "ch3 --T 4" "ch4 --depths 1" \
            "ch5 ${m5[*]} --tokens 20" "ch6 ${t6[*]} --steps 2" \
            "ch7 ${t7[*]} --steps 2" "ch9 ${g9[*]} --tokens 5" "ch1 --help"; do
    # (word splitting of $args is wanted: a program and its flags)
    # shellcheck disable=SC2086
    STDOUT=$DEVFULL bad out 1 "cannot write the output: No space left on \
device" $args
done

summary() {
    local -n counts=$1
    local k line=""
    for k in $(printf '%s\n' "${!counts[@]}" | sort); do
        line="$line $k ${counts[$k]},"
    done
    echo "${line%,}"
}
echo "bad inputs by program:$(summary by_prog)"
echo "bad inputs by category:$(summary by_cat)"
[ "$ASAN" = 1 ] && echo "(an AddressSanitizer build: no ulimit -v, and two cases fewer)"
echo "bad inputs: $passed passed, $failed failed"
# The README gives the catalogue's size ("(N cases: ..."): it must be
# this run's (compared where the whole catalogue ran: not in an ASan
# build, which has two cases fewer, nor without ./ch8, where nvcc is not)
total=$((passed + failed))
said=$(sed -n 's/.*(\([0-9]*\) cases: .*/\1/p' "$ROOT/README.md" | head -n 1)
if [ "$ASAN" = 0 ] && [ -n "${by_prog[ch8]:-}" ] && [ -n "$said" ] && [ "$said" != "$total" ]; then
    echo "FAIL: README.md counts $said bad-input cases; this run has $total"
    failed=$((failed + 1))
fi
[ "$failed" = 0 ]
