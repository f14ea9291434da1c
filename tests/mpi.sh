#!/usr/bin/env bash
# mpi.sh - chapter 6 trained by two processes (MPI ranks) is the run of
# one process with the same batch:
#   * 2 ranks with --batch 16 (8 sequences each) and 1 process with
#     --batch 16 give the same losses and gradient norms for 20 steps, and
#     the same checkpoint, up to the rounding of sums taken in another
#     order (TOL below); ./ch5 loads the 2-rank checkpoint and samples;
#   * chapter 9's fine-tuning of a tiny GPT-2 (chapter 6's trainer) on 2
#     ranks gives the 1-process run's losses and model files;
#   * a run saved by 2 ranks resumes in 1 process, and the other way, and
#     goes on as the run that was never stopped;
#   * an error on any rank (a bad flag, a missing file, a folder rank 0
#     cannot write, a disk that fills up under rank 0's save, an error on
#     rank 1 alone) ends every rank with one
#     error line and a non-zero status, never a hang; --help prints once;
#   * SIGUSR1, to mpirun or to one rank, stops every rank at one step,
#     rank 0 saves, and the run resumes;
#   * the build without MPI refuses to run as several processes.
#
#   bash tests/mpi.sh [FOLDER]
#
# FOLDER holds ch5, ch6, ch6-mpi, ch9, ch9-mpi and st_compare (default:
# build/cc);
# `make check-mpi` builds them and runs this, as does `make check MPI=1`.
# The ranks talk through shared memory only (Open MPI's vader), on one
# machine; as root, Open MPI needs its two permission variables.
set -u
BIN=$(cd "${1:-build/cc}" && pwd) || exit 2
for p in ch5 ch6 ch6-mpi ch9 ch9-mpi st_compare; do
    [ -x "$BIN/$p" ] || { echo "mpi.sh: no $BIN/$p (make check-mpi)" >&2
                          exit 2; }
done
command -v mpirun >/dev/null || { echo "mpi.sh: no mpirun" >&2; exit 2; }
TMP=$(mktemp -d)
DISK=$TMP/disk    # a small tmpfs that fills up (as root)
mounted=0
cleanup() {
    [ "$mounted" = 1 ] && umount "$DISK"
    rm -rf "$TMP"
}
trap cleanup EXIT
fails=0 checks=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
ok() { checks=$((checks + 1)); }

if [ "$(id -u)" = 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
# -q: no banners of mpirun's own; shared memory without the kernel's
# cross-process copy, which containers often forbid
MPIRUN=(mpirun -q --oversubscribe --mca btl self,vader
        --mca btl_vader_single_copy_mechanism none)
# every run is bounded: a hang fails the test instead of the whole check
LIMIT=120
mpi() {   # N ARGS...: ARGS on N ranks, output in $TMP/out, $TMP/err
    local n=$1; shift
    timeout -k 5 $LIMIT "${MPIRUN[@]}" -np "$n" "$@" >"$TMP/out" 2>"$TMP/err"
}

# A small model, a batch of 16, 20 steps, on one thread per process.
# TOL: the largest difference allowed, relative (|a - b| / (1 + |b|)),
# between a number of the 2-rank run and of the 1-process run. The two
# sum the same gradients in another order (two halves of the batch, then
# the all-reduce), which changes the last bits of fp32 numbers; measured
# here: 0 in the losses printed with 6 decimals, 3e-6 in the weights after
# 20 AdamW steps. A rank that saw other data, or a gradient summed and not
# averaged (twice the gradient norm), is off by far more than TOL.
TOL=5e-5
S=(--layers 2 --heads 2 --embd 48 --block 64 --batch 16 --warmup 5
   --eval-every 10 --eval-iters 4 --threads 1 --sample-chars 0)

# compare_csv A B FIRST LAST: the --log rows of steps FIRST..LAST agree
compare_csv() {
    awk -F, -v tol=$TOL -v first="$3" -v last="$4" '
        function bad(a, b) {
            if ((a == "") != (b == "")) return 1
            if (a == "") return 0
            d = a - b; if (d < 0) d = -d
            return d / (1 + (b < 0 ? -b : b)) > tol
        }
        FNR == 1 { next }   # the header
        NR == FNR { if ($1 >= first && $1 <= last) row[$1 "/" ($2 == "")] = $0
                    next }
        $1 >= first && $1 <= last {
            key = $1 "/" ($2 == ""); seen++
            if (!(key in row)) { print "step " $1 ": no such row"; exit 1 }
            split(row[key], o, ",")
            for (c = 2; c <= 4; c++) if (bad($c, o[c])) {
                print "step " $1 ", column " c ": " $c " against " o[c]; exit 1 }
            if (bad($6, o[6])) {
                print "step " $1 ", grad norm: " $6 " against " o[6]; exit 1 }
        }
        END { if (seen < last - first + 1) { print "only " seen " rows"
                                             exit 1 } }' "$1" "$2"
}

# ---- 1. two ranks against one process ----
"$BIN/ch6" "${S[@]}" --steps 20 --out "$TMP/one" --log "$TMP/one.csv" \
    >"$TMP/one.out" 2>&1 || fail "the 1-process run: $(tail -n 2 "$TMP/one.out")"
if mpi 2 "$BIN/ch6-mpi" "${S[@]}" --steps 20 --out "$TMP/two" \
       --log "$TMP/two.csv"; then
    ok
    grep -q "^processes   2 MPI ranks, 8 sequences" "$TMP/out" \
        && ok || fail "2 ranks: no 'processes' line in the report"
    [ "$(grep -c '^summary:' "$TMP/out")" = 1 ] && ok \
        || fail "2 ranks: the report is not printed once"
    if msg=$(compare_csv "$TMP/one.csv" "$TMP/two.csv" 1 20); then ok
    else fail "2 ranks against 1 process, losses: $msg"; fi
    for f in model.safetensors state-20.safetensors; do
        if msg=$("$BIN/st_compare" "$TMP/one/$f" "$TMP/two/$f" $TOL 2>&1)
        then ok; else fail "2 ranks against 1 process, $f: $msg"; fi
    done
    if "$BIN/ch5" --checkpoint "$TMP/two/model.safetensors" --tokens 40 \
           --sample-only >"$TMP/sample" 2>&1 \
       && [ "$(wc -c <"$TMP/sample")" -ge 40 ]; then ok
    else fail "ch5 cannot sample from the 2-rank checkpoint: $(head -c 300 "$TMP/sample")"; fi
else
    fail "the 2-rank run failed: $(tail -n 3 "$TMP/err")"
fi

# ---- 1b. chapter 9's fine-tuning, the same trainer with another task ----
# (the tiny GPT-2 of the tests, GPT-2-style tokens of Tiny Shakespeare)
F=(--finetune --model tests/reference/ch9_ft --steps 10 --batch 4 --warmup 2
   --eval-every 5 --eval-iters 2 --threads 1 --sample-tokens 0)
"$BIN/ch9" "${F[@]}" --out "$TMP/g1" --log "$TMP/g1.csv" >"$TMP/g1.out" 2>&1 \
    || fail "ch9, 1 process: $(tail -n 2 "$TMP/g1.out")"
if mpi 2 "$BIN/ch9-mpi" "${F[@]}" --out "$TMP/g2" --log "$TMP/g2.csv"; then
    if msg=$(compare_csv "$TMP/g1.csv" "$TMP/g2.csv" 1 10); then ok
    else fail "ch9, 2 ranks against 1 process, losses: $msg"; fi
    for f in model.safetensors hf/model.safetensors; do
        if msg=$("$BIN/st_compare" "$TMP/g1/$f" "$TMP/g2/$f" $TOL 2>&1)
        then ok; else fail "ch9, 2 ranks against 1 process, $f: $msg"; fi
    done
else
    fail "ch9, 2 ranks: $(tail -n 3 "$TMP/err")"
fi

# ---- 2. resuming with another number of processes ----
# the first 10 steps of the run above (its cosine still ends at 20) ...
half=("${S[@]}" --steps 10 --decay-steps 20)
res=(--threads 1 --sample-chars 0 --steps 20)
# ... on 2 ranks, the rest in 1 process
mpi 2 "$BIN/ch6-mpi" "${half[@]}" --out "$TMP/r21" \
    || fail "2 ranks, 10 steps: $(tail -n 2 "$TMP/err")"
if "$BIN/ch6" --resume "$TMP/r21" "${res[@]}" --log "$TMP/r21.csv" \
       >"$TMP/r.out" 2>&1; then
    if msg=$(compare_csv "$TMP/one.csv" "$TMP/r21.csv" 11 20); then ok
    else fail "2 ranks resumed in 1 process: $msg"; fi
    "$BIN/st_compare" "$TMP/one/model.safetensors" \
        "$TMP/r21/model.safetensors" $TOL >/dev/null \
        && ok || fail "2 ranks resumed in 1 process: another checkpoint"
else
    fail "resuming the 2-rank run in 1 process: $(tail -n 2 "$TMP/r.out")"
fi
# ... and in 1 process, the rest on 2 ranks
"$BIN/ch6" "${half[@]}" --out "$TMP/r12" >"$TMP/r.out" 2>&1 \
    || fail "1 process, 10 steps: $(tail -n 2 "$TMP/r.out")"
if mpi 2 "$BIN/ch6-mpi" --resume "$TMP/r12" "${res[@]}" \
       --log "$TMP/r12.csv"; then
    if msg=$(compare_csv "$TMP/one.csv" "$TMP/r12.csv" 11 20); then ok
    else fail "1 process resumed on 2 ranks: $msg"; fi
    "$BIN/st_compare" "$TMP/one/model.safetensors" \
        "$TMP/r12/model.safetensors" $TOL >/dev/null \
        && ok || fail "1 process resumed on 2 ranks: another checkpoint"
else
    fail "resuming on 2 ranks: $(tail -n 2 "$TMP/err")"
fi

# ---- 3. errors end every rank, with one line ----
# expect_error WHAT STATUS PATTERN N ARGS...: ARGS on N ranks ends with
# STATUS and exactly one line on stderr, which matches PATTERN
expect_error() {
    local what=$1 want=$2 pattern=$3; shift 3
    local start=$SECONDS rc=0
    mpi "$@" || rc=$?
    local lines
    lines=$(wc -l <"$TMP/err")
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        fail "$what: still running after ${LIMIT}s (a hang)"
    elif [ "$rc" != "$want" ]; then
        fail "$what: status $rc, not $want: $(head -c 400 "$TMP/err")"
    elif [ "$lines" != 1 ]; then
        fail "$what: $lines lines on stderr, not 1: $(head -c 600 "$TMP/err")"
    elif ! grep -Eq "$pattern" "$TMP/err"; then
        fail "$what: the message does not say '$pattern': $(cat "$TMP/err")"
    else
        ok
    fi
    [ $((SECONDS - start)) -le 30 ] \
        || fail "$what: took $((SECONDS - start)) s to end"
}
tiny=(--layers 1 --heads 1 --embd 16 --block 16 --threads 1
      --sample-chars 0 --quiet)
expect_error "a bad flag" 2 "^ch6(-mpi)?: error: unknown flag.*--bogus" \
    2 "$BIN/ch6-mpi" --bogus
expect_error "a batch that does not split" 2 "batch 15 does not split" \
    2 "$BIN/ch6-mpi" "${tiny[@]}" --batch 15
expect_error "a missing data file" 1 "error: .*$TMP/missing" \
    2 "$BIN/ch6-mpi" "${tiny[@]}" --data "$TMP/missing"
: >"$TMP/afile"   # rank 0 alone checks the folder it saves in
expect_error "an --out rank 0 cannot use" 1 "error: .*afile" \
    2 "$BIN/ch6-mpi" "${tiny[@]}" --steps 5 --out "$TMP/afile"
# rank 1 alone: mpirun's MPMD form gives it other flags
expect_error "an error on rank 1 alone" 1 "error: .*$TMP/missing" \
    1 "$BIN/ch6-mpi" "${tiny[@]}" --steps 100000 : \
    -np 1 "$BIN/ch6-mpi" "${tiny[@]}" --steps 100000 --data "$TMP/missing"
expect_error "resuming on ranks that do not divide the batch" 1 \
    "batch of 16 does not split into 3" \
    3 "$BIN/ch6-mpi" --resume "$TMP/r12" --threads 1
expect_error "the build without MPI under mpirun" 1 "built without MPI" \
    2 "$BIN/ch6" "${tiny[@]}"
# a disk that fills up under rank 0's save, in the middle of the run
mkdir -p "$DISK"
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=1m tmpfs "$DISK" 2>/dev/null
then
    mounted=1
    if mpi 2 "$BIN/ch6-mpi" "${tiny[@]}" --steps 3 --out "$DISK/run"; then
        free=$(df --output=avail -B4096 "$DISK" | tail -n 1)
        dd if=/dev/zero of="$DISK/filler" bs=4k count=$((free - 1)) \
            2>/dev/null
        expect_error "a full disk during rank 0's save" 1 "No space left" \
            2 "$BIN/ch6-mpi" --resume "$DISK/run" --steps 6 --save-every 1 \
            --threads 1 --quiet --sample-chars 0
        rm -f "$DISK/filler"
    else
        fail "the run before the disk fills: $(tail -n 2 "$TMP/err")"
    fi
else
    echo "  (cannot mount a small tmpfs here: no full-disk case)"
fi
if mpi 2 "$BIN/ch6-mpi" --help && [ "$(grep -c '^usage:' "$TMP/out")" = 1 ]
then ok; else fail "--help on 2 ranks: not printed exactly once"; fi

# ---- 4. SIGUSR1: every rank stops at the same step, rank 0 saves ----
# mpirun answers a Ctrl-C with SIGTERM to the ranks and SIGKILL one
# second later, too soon for a long step to end and save (ch6.md says
# so); SIGUSR1, which mpirun passes on as it is, has no such deadline.
# Sent to mpirun (what a user does) and to rank 1 alone (the ranks must
# agree on the step to stop at, though rank 0 never saw the signal).
stop_test() {   # NAME WHOM: WHOM is "mpirun" or "rank1"
    local name=$1 whom=$2 tpid mpid target="" _
    rm -rf "$TMP/cc"
    timeout -k 5 $LIMIT "${MPIRUN[@]}" -np 2 "$BIN/ch6-mpi" "${tiny[@]}" \
        --steps 1000000 --out "$TMP/cc" --eval-every 50 --eval-iters 1 \
        --batch 4 >"$TMP/out" 2>"$TMP/err" &
    tpid=$!
    for _ in $(seq 300); do   # until it is training
        grep -q "^eval step" "$TMP/out" 2>/dev/null && break
        sleep 0.1
    done
    mpid=$(pgrep -P "$tpid" -x mpirun)
    if [ "$whom" = mpirun ]; then
        target=$mpid
    else
        for p in $(pgrep -P "$mpid"); do
            tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null \
                | grep -qx OMPI_COMM_WORLD_RANK=1 && target=$p
        done
    fi
    [ -n "$target" ] && kill -USR1 "$target"
    wait "$tpid"
    if [ -n "$target" ] && grep -q "^interrupted at step" "$TMP/out" \
       && [ ! -s "$TMP/err" ] \
       && "$BIN/ch6" --resume "$TMP/cc" --threads 1 --sample-chars 0 \
              --quiet --steps "$(sed -n \
                  's/^interrupted at step \([0-9]*\).*/\1/p' "$TMP/out" \
                  | awk '{print $1 + 2}')" >/dev/null 2>&1
    then ok
    else fail "$name: not saved, or not resumable (pid '$target'):" \
              "$(tail -n 3 "$TMP/out") $(cat "$TMP/err")"
    fi
}
stop_test "SIGUSR1 to mpirun" mpirun
stop_test "SIGUSR1 to rank 1 alone" rank1

echo "mpi: $checks checks passed, $fails failed (2 ranks against 1 process," \
     "tolerance $TOL)"
[ "$fails" = 0 ]
