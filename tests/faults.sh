#!/usr/bin/env bash
# faults.sh - training runs meet the faults of real machines, and lose
# nothing saved:
#   * kill -9 at random moments, and at chosen moments of a save (in the
#     middle of writing the optimiser state, between it and the model,
#     in the middle of the model): the folder always loads, --resume
#     continues, and the resumed run ends with the very files of a run
#     that was never killed; no temporary file is left once it has run;
#   * a disk that fills up during a save: one clear error line, exit
#     status 1, the previous checkpoint intact and no temporary file;
#   * Ctrl-C: the run saves, says where and exits with status 130; a
#     second Ctrl-C quits at once.
# For ./ch6 (the GPT) and ./ch7 (the translator), with tiny models.
#
#   bash tests/faults.sh [--full] [FOLDER]
#
# FOLDER holds ch5, ch6, ch7 and killwatch (tests/faults/killwatch.c);
# default: build/cc. `make check` runs the short form (about 15 s: a few
# kills of each kind); --full runs 24 kills of ./ch6 and 8 of ./ch7.
set -u
full=0
if [ "${1:-}" = --full ]; then full=1; shift; fi
BIN=$(cd "${1:-build/cc}" && pwd) || exit 2
TMP=$(mktemp -d)
DISK=$TMP/disk    # the folder that fills up
mounted=0
cleanup() {
    [ "$mounted" = 1 ] && umount "$DISK"
    rm -rf "$TMP"
}
trap cleanup EXIT
fails=0 checks=0 kills=0 in_save=0

fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
ok() { checks=$((checks + 1)); }

# the two programs with tiny models, a checkpoint at every step
gpt=(--layers 1 --heads 1 --embd 16 --block 8 --batch 2 --eval-iters 1
     --eval-every 0 --sample-chars 0 --quiet --threads 1 --steps 200
     --save-every 1)
mt=(--task translate --merges 200 --embd 8 --ffn 8 --heads 1 --layers 1
    --batch-tokens 500 --beam 1 --show 0 --quiet --threads 1 --steps 60
    --save-every 1)
# resuming: ./ch6 and ./ch7 each keep the rest of the run's settings
gpt_resume=(--quiet --threads 1 --sample-chars 0 --save-every 1)
mt_resume=(--quiet --threads 1 --beam 1 --show 0 --save-every 1)

run_prog() {   # PROG ARGS...: $BIN/PROG ARGS, output in $TMP/out, $TMP/err
    local prog=$1; shift
    "$BIN/$prog" "$@" >"$TMP/out" 2>"$TMP/err"
}

# the runs that are never interrupted, whose files every resumed run
# must reproduce byte for byte
run_prog ch6 "${gpt[@]}" --out "$TMP/ref6" || fail "ch6: the reference run"
run_prog ch7 "${mt[@]}" --out "$TMP/ref7" || fail "ch7: the reference run"

# temps DIR: the temporary files of unfinished saves in DIR
temps() { find "$1" -name '*.tmp.*' | wc -l; }

# loads PROG DIR: the model file in DIR is a whole checkpoint
loads() {
    if [ "$1" = ch6 ]; then
        run_prog ch5 --checkpoint "$2/model.safetensors" --tokens 1 \
            --sample-only
    else
        run_prog ch7 --checkpoint "$2/model.safetensors" --translate \
            "Ein Hund." --beam 1
    fi
}

# resumed PROG DIR WHAT: DIR loads, --resume ends the run, and the
# folder then holds exactly the files of the reference run
resumed() {
    local prog=$1 dir=$2 what=$3 ref
    if ! loads "$prog" "$dir"; then
        fail "$what: the saved model does not load: $(head -c 300 "$TMP/err")"
        return
    fi
    ok
    if [ "$prog" = ch6 ]; then
        ref=$TMP/ref6
        run_prog ch6 --resume "$dir" "${gpt_resume[@]}"
    else
        ref=$TMP/ref7
        run_prog ch7 --resume "$dir" "${mt_resume[@]}"
    fi || { fail "$what: --resume failed: $(head -c 300 "$TMP/err")"
            return; }
    ok
    [ "$(temps "$dir")" = 0 ] || fail "$what: temporary files are left \
after --resume: $(ls "$dir")"
    for f in "$ref"/*; do
        cmp -s "$f" "$dir/${f##*/}" \
            || fail "$what: ${f##*/} differs from the run never killed"
    done
    [ "$(ls "$dir" | wc -l)" = "$(ls "$ref" | wc -l)" ] \
        || fail "$what: the folder holds $(ls "$dir" | tr '\n' ' ')"
    ok
}

# kill_trial PROG N KILLWATCH-ARGS...: the Nth kill of PROG
kill_trial() {
    local prog=$1 n=$2; shift 2
    local dir=$TMP/$prog-kill-$n args
    mkdir -p "$dir"
    if [ "$prog" = ch6 ]; then args=("${gpt[@]}"); else args=("${mt[@]}"); fi
    "$BIN/killwatch" --dir "$dir" "$@" -- "$BIN/$prog" "${args[@]}" \
        --out "$dir" >"$TMP/kw" 2>/dev/null
    local how
    how=$(tail -n 1 "$TMP/kw")
    kills=$((kills + 1))
    case $how in
    "signal 9 at "*) ok ;;
    *) fail "$prog kill $n ($*): not killed: $how"; return ;;
    esac
    local left
    left=$(temps "$dir")
    [ "$left" != 0 ] && in_save=$((in_save + 1))
    [ "$full" = 1 ] && printf '  %s kill %2d: %-58s %s\n' "$prog" "$n" \
        "${how#signal 9 at }" "$([ "$left" != 0 ] && echo "(mid-save)")"
    resumed "$prog" "$dir" "$prog kill $n ($*)"
}

# The four kinds of moment, in turn: a random time after the first save;
# while the optimiser state is written; after the state is in place and
# before the model is; while the model is written (the temporary files
# appear with create, a finished file with moved).
kill_kinds() {   # PROG TRIALS MAX_STEP
    local prog=$1 trials=$2 steps=$3
    for ((i = 0; i < trials; i++)); do
        local nth=$((2 + RANDOM % (steps - 10))) us=$((RANDOM % 400))
        case $((i % 4)) in
        0) kill_trial "$prog" "$i" --on 'moved:model.safetensors' \
               --delay-us $((RANDOM * 8)) ;;
        1) kill_trial "$prog" "$i" --on 'create:state-*.tmp.*' --nth "$nth" \
               --delay-us "$us" ;;
        2) kill_trial "$prog" "$i" --on 'moved:state-*.safetensors' \
               --nth "$nth" ;;
        3) kill_trial "$prog" "$i" --on 'create:model.safetensors.tmp.*' \
               --nth "$nth" --delay-us "$us" ;;
        esac
    done
}

echo "kill -9 during training with a checkpoint at every step:"
if [ "$full" = 1 ]; then
    kill_kinds ch6 24 200
    kill_kinds ch7 8 60
else
    kill_kinds ch6 4 200
    kill_kinds ch7 4 60
fi
echo "  $kills runs killed ($in_save in the middle of a save): each loaded, \
resumed and ended as the run never killed"

# ---- a full disk ---------------------------------------------------------------
# A small tmpfs, filled up after the first checkpoints; without the right
# to mount one (not root), a file size limit stands in for it.
disk_full() {   # PROG
    local prog=$1 dir args rargs ref
    if [ "$prog" = ch6 ]; then args=("${gpt[@]}"); rargs=("${gpt_resume[@]}")
    else args=("${mt[@]}"); rargs=("${mt_resume[@]}"); fi
    dir=$DISK/$prog
    mkdir -p "$dir"
    # (a Ctrl-C after the fifth checkpoint ends the run before the fault)
    "$BIN/killwatch" --dir "$dir" --on 'moved:model.safetensors' --nth 5 \
        --signal 2 -- "$BIN/$prog" "${args[@]}" --out "$dir" >"$TMP/kw" \
        2>/dev/null
    grep -q "^exit 130" "$TMP/kw" \
        || { fail "$prog: the run before the disk fills"; return; }
    cp -r "$dir" "$TMP/$prog-before"
    local rc=0
    if [ "$mounted" = 1 ]; then
        # all but three pages: room for ./ch7's small translate.json,
        # none for a checkpoint
        local free
        free=$(df --output=avail -B4096 "$DISK" | tail -n 1)
        dd if=/dev/zero of="$DISK/filler" bs=4k count=$((free - 3)) \
            2>/dev/null
        run_prog "$prog" --resume "$dir" "${rargs[@]}" || rc=$?
        rm -f "$DISK/filler"
    else
        (ulimit -f 8; trap '' XFSZ
         "$BIN/$prog" --resume "$dir" "${rargs[@]}" >"$TMP/out" 2>"$TMP/err") \
            || rc=$?
    fi
    [ "$rc" = 1 ] || fail "$prog on a full disk: exit status $rc, expected 1"
    grep -qE "^$prog: error: cannot (write|flush|save) .*(No space left|File too large)" \
        "$TMP/err" && [ "$(wc -l <"$TMP/err")" = 1 ] \
        || fail "$prog on a full disk: not one clear line: $(cat "$TMP/err")"
    [ "$(temps "$dir")" = 0 ] || fail "$prog on a full disk: a temporary \
file is left: $(ls "$dir")"
    cmp -s "$dir/model.safetensors" "$TMP/$prog-before/model.safetensors" \
        || fail "$prog on a full disk: the saved model changed"
    ok
    echo "  $prog: $(cut -c1-70 "$TMP/err" | head -n 1)..."
    # the space back, the run goes on from the checkpoint before the fault
    resumed "$prog" "$dir" "$prog after a full disk"
}

echo "a disk that fills up during a save:"
mkdir -p "$DISK"
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=2m tmpfs "$DISK" 2>/dev/null
then
    mounted=1
else
    echo "  (cannot mount a small tmpfs here: a file size limit, ulimit -f, \
stands in for the full disk)"
fi
disk_full ch6
disk_full ch7

# ---- Ctrl-C ----------------------------------------------------------------------
echo "Ctrl-C:"
# ctrl_c PROG ARGS...: one Ctrl-C after the seventh checkpoint; the run
# saves, says how to go on and exits with 130, and goes on exactly
ctrl_c() {
    local prog=$1; shift
    local dir=$TMP/int-$prog
    mkdir -p "$dir"
    "$BIN/killwatch" --dir "$dir" --on 'moved:model.safetensors' --nth 7 \
        --signal 2 -- "$BIN/$prog" "$@" --out "$dir" >"$TMP/kw" 2>"$TMP/err"
    if ! grep -q "^exit 130 at" "$TMP/kw" \
       || ! grep -qE "^interrupted at step [0-9]+; saved in $dir: \
./$prog --resume" "$TMP/kw"; then
        fail "$prog Ctrl-C: $(tail -n 2 "$TMP/kw")"
    else
        ok
        echo "  $prog: $(grep '^interrupted' "$TMP/kw" | cut -c1-70)..."
    fi
    resumed "$prog" "$dir" "$prog after Ctrl-C"
}
ctrl_c ch6 "${gpt[@]}"
ctrl_c ch7 "${mt[@]}"

# A second Ctrl-C while an evaluation of many batches runs (seconds: the
# most batches --eval-iters takes, 10,000, of 8 x 16 tokens each): the
# program quits at once instead of finishing it.
# (the first checkpoint is saved at step 1; step 2 ends with the long
# evaluation, which the two Ctrl-Cs interrupt)
dir=$TMP/int6twice
mkdir -p "$dir"
"$BIN/killwatch" --dir "$dir" --on 'moved:model.safetensors' \
    --delay-us 100000 --signal 2 --again-ms 100 -- "$BIN/ch6" \
    --layers 1 --heads 1 --embd 16 --block 16 --batch 8 --sample-chars 0 \
    --quiet --threads 1 --steps 3 --eval-every 2 --eval-iters 10000 \
    --save-every 1 --out "$dir" >"$TMP/kw" 2>"$TMP/err"
ms=$(sed -n 's/^exit 130 at .*, ended \([0-9]*\) ms after the signal$/\1/p' \
     "$TMP/kw")
if [ -z "$ms" ] || [ "$ms" -gt 500 ] \
   || ! grep -q "Ctrl-C again: quitting now" "$TMP/err"; then
    fail "ch6, Ctrl-C twice: $(tail -n 1 "$TMP/kw"); $(cat "$TMP/err")"
else
    ok
    echo "  ch6, Ctrl-C twice during an evaluation: quit $ms ms after the second"
fi
loads ch6 "$dir" || fail "ch6, Ctrl-C twice: the step-1 checkpoint is lost"
[ "$(ls "$dir")" = "$(printf 'model.safetensors\nstate-1.safetensors')" ] \
    || fail "ch6, Ctrl-C twice: the folder holds $(ls "$dir" | tr '\n' ' ')"

echo "faults: $checks checks passed, $fails failed"
[ "$fails" = 0 ]
