#!/usr/bin/env bash
# test_cli.sh - the chapter programs' command lines: bad flags give one
# error line and exit status 2, defaults shown by --help are real, and the
# behaviours the flags promise (ch2's causality, ch5's scoring and
# sampling, ch7's --bleu) hold. Run by `make check` from the repository root:
#
#   bash tests/cli/test_cli.sh [folder holding ch1 .. ch8]   (default: .)
#
# A few seconds: no program runs its full report except ch2 at --max-T 64;
# ch6 trains a tiny model for a few steps.
set -u
# awk, printf and sort read and write numbers by the locale ("0,5" under a
# German one): the C one, as make gives every command (see the Makefile)
export LC_ALL=C.UTF-8
unset LANGUAGE
BIN=$(cd "${1:-.}" && pwd)
ROOT=$(pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0 runs=0

fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
# said TEXT: the last output holds TEXT, perhaps folded over lines
said() { tr '\n' ' ' <"$TMP/out" | tr -s ' ' | grep -qF -- "$1"; }
# the rule for an error line's width; the chapters' listings
# shellcheck source=tests/error_width.sh
. "$ROOT/tests/error_width.sh"
# shellcheck source=tests/listings.sh
. "$ROOT/tests/listings.sh"

# expect STATUS TEXT PROG ARGS...: runs $BIN/PROG ARGS, checks the exit
# status and that stdout + stderr hold TEXT (empty TEXT: anything).
# On a status of 2, stderr must be exactly one line, within 80 columns.
expect() {
    local want=$1 text=$2 prog=$3 wide
    shift 3
    runs=$((runs + 1))
    "$BIN/$prog" "$@" >"$TMP/out" 2>"$TMP/err"
    local rc=$?
    if [ "$rc" != "$want" ]; then
        fail "$prog $*: exit status $rc, expected $want"
        sed 's/^/    /' "$TMP/err" >&2
        return
    fi
    if [ -n "$text" ] && ! grep -qF -- "$text" "$TMP/out" "$TMP/err"; then
        fail "$prog $*: output lacks '$text'"
        sed 's/^/    /' "$TMP/err" >&2
    fi
    if [ "$want" = 2 ] && [ "$(wc -l <"$TMP/err")" != 1 ]; then
        fail "$prog $*: expected one error line, got:"
        sed 's/^/    /' "$TMP/err" >&2
    elif [ "$want" = 2 ] && wide=$(error_too_wide "$TMP/err" "$@"); then
        fail "$prog $*: the error is $wide wide, more than 80:"
        sed 's/^/    /' "$TMP/err" >&2
    fi
    if [ "$want" = 2 ] && [ -s "$TMP/out" ]; then
        fail "$prog $*: printed a report before its usage error"
    fi
}

# --help: every flag with its default, never a sentinel
for p in ch1 ch2 ch3 ch4 ch5 ch6 ch7 ch9; do
    expect 0 "(default: " $p --help
    if grep -qE 'default: -|\(default: \)' "$TMP/out"; then
        fail "$p --help shows a sentinel or empty default"
    fi
    expect 2 "unknown flag '--bogus'" $p --bogus
    expect 2 "integer, got 'x'" $p --seed x
done

# --help shows the range of every number flag (all but --seed have one),
# and it is the range the flag's check applies: a value just past each
# end is refused with the same numbers ("see --help" must not lie). An
# end that is another flag's value ("in [0, --T]") is shown by name.
help_ranges() {   # help_ranges PROG ARGS...: PROG ARGS --help, then each flag
    local prog=$1 name arg lo hi range
    shift
    expect 0 "(default: " "$prog" "$@" --help
    # one line per flag: "NAME|ARG|LO, HI", the range "-" where there is
    # none, ARG "-" for a switch
    awk '/^  --/ { if (f) print f "|" a "|" (r ? r : "-"); f = $1; a = $2;
                   r = ""; sub(/^--/, "", f); if (a !~ /^(N|X|STR)$/) a = "-" }
         { if (match($0, /in \[[^]]*\]/)) r = substr($0, RSTART + 4,
                                                     RLENGTH - 5) }
         END { if (f) print f "|" a "|" (r ? r : "-") }' "$TMP/out" \
        >"$TMP/flags"
    local n=0
    while IFS='|' read -r name arg range; do
        [ "$arg" = N ] || [ "$arg" = X ] || continue
        [ "$name" = seed ] && continue
        if [ "$range" = - ]; then
            fail "$prog $* --help: --$name shows no range"
            continue
        fi
        n=$((n + 1))
        lo=${range%%, *} hi=${range#*, }
        case $range in *--*) continue ;; esac   # another flag's value
        local above below
        if [ "$arg" = N ]; then
            above=$(awk -v v="$hi" 'BEGIN { printf "%.0f", v + 1 }')
            below=$(awk -v v="$lo" 'BEGIN { printf "%.0f", v - 1 }')
        else
            above=$(awk -v v="$hi" 'BEGIN { printf "%g", 2 * v + 1 }')
            below=$(awk -v v="$lo" 'BEGIN { printf "%g", v - 1 }')
        fi
        expect 2 "--$name must be in [$lo, $hi], got" "$prog" "$@" \
            --"$name" "$above"
        expect 2 "--$name must be in [$lo, $hi], got" "$prog" "$@" \
            --"$name" "$below"
    done <"$TMP/flags"
    [ "$n" -gt 0 ] || fail "$prog $* --help: no flag shows a range"
    awk 'length($0) > 80 { print }' "$TMP/out" | grep -q . &&
        fail "$prog $* --help: lines over 80 columns"
}
for p in ch1 ch2 ch3 ch4 ch5 ch6 ch7 ch9; do help_ranges $p; done
help_ranges ch7 --task translate
help_ranges ch9 --finetune
[ -x "$BIN/ch8" ] && help_ranges ch8

# The chapters show --help as the programs print it: each listing of
# "$ ./chN ... --help" is their output, line for line ("..." stands for
# lines left out).
n=$(listings_of '^\./ch[0-9][^|>]* --help$' "$TMP/listings")
[ "$n" -ge 7 ] || fail "only $n --help listings found in the chapters"
for l in "$TMP"/listings/*; do
    [ -f "$l" ] || continue
    read -r -a cmd < <(head -n 1 "$l" | sed 's/^\$ //')
    prog=${cmd[0]#./}
    [ -x "$BIN/$prog" ] || continue   # ./ch8 where nvcc is not
    "$BIN/$prog" "${cmd[@]:1}" >"$TMP/help.out" 2>&1
    listing_matches "$l" "$TMP/help.out" \
        || fail "a chapter's listing of '$(head -n 1 "$l")' is not its output"
done

# ch1
expect 2 "--batch must be in [1, 64], got 0" ch1 --batch 0
expect 2 "--block must be in [1, 4096], got 5000" ch1 --block 5000
expect 2 "--alpha must be in [" ch1 --alpha 0
expect 2 "--data is empty" ch1 --data ''
expect 2 "--text: 'é' (U+00E9) at position 0 is not in" ch1 --text 'é'
printf 'abcdefghij' >"$TMP/short.txt"
expect 2 "too short for --block 16" ch1 --data "$TMP/short.txt" --block 16
expect 1 "cannot open $TMP/none.txt" ch1 --data "$TMP/none.txt"
(cd "$TMP" && expect 1 "make data" ch1)

# ch2: the text is blamed, not a --T the user did not give
expect 2 "--text is empty" ch2 --text ''
grep -qF -- "--T" "$TMP/err" && fail "ch2 --text '': blames --T"
expect 2 "--text has 2 characters, too few for --T 3" ch2 --text ab --T 3
expect 2 "--T must be in [1, 32], got 40" ch2 --T 40
expect 2 "--pad must be in [0, 8], got 9" ch2 --pad 9
expect 2 "--max-T must be in [64, 4096], got 8192" ch2 --max-T 8192
expect 2 "--heads must divide --channels 32, got 5" ch2 --heads 5
expect 0 "(default: 3)" ch2 --text abc --help
# causality: with --T 8 the first 4 rows are those of --T 4, extended
# (a --text of 4 characters makes 4 the default T)
expect 0 "T=4 C=32" ch2 --text 'To b' --max-T 64
sed -n '4,7p' "$TMP/out" >"$TMP/t4"
expect 0 "T=8" ch2 --T 8 --max-T 64
sed -n '4,7p' "$TMP/out" | cut -c1-"$(head -n 1 "$TMP/t4" | wc -c | \
    awk '{print $1 - 1}')" >"$TMP/t8"
if [ "$(wc -l <"$TMP/t4")" != 4 ] || ! cmp -s "$TMP/t4" "$TMP/t8"; then
    fail "ch2: the first rows of --T 4 and --T 8 differ"
    diff "$TMP/t4" "$TMP/t8" >&2
fi

# ch3: --ff's default is 4C, a number; 0 is no sentinel
expect 0 "(default: 32)" ch3 --help
expect 0 "(default: 64)" ch3 --channels 16 --help
expect 2 "--ff must be in [1, 16384], got 0" ch3 --ff 0
expect 2 "--dropout must be in [0, 0.99], got 1" ch3 --dropout 1
expect 2 "--gelu must be exact or tanh, got ''" ch3 --gelu ''
expect 2 "--T must be in [1, 64], got 0" ch3 --T 0

# ch4
expect 2 "--channels must be in [1, 1024], got 0" ch4 --channels 0
expect 2 "--heads must divide --channels (64), got 3" ch4 --heads 3
expect 2 "--depths is empty" ch4 --depths ''
expect 2 "up to 8 numbers in [1, 256]" ch4 --depths 300
expect 2 "2048 layers, too long" ch4 --depths 256,256,256,256,256,256,256,256

# ch5: flags
expect 2 "--score is empty" ch5 --score ''
expect 2 "--save is empty" ch5 --save ''
expect 2 "--checkpoint is empty" ch5 --checkpoint ''
expect 2 "--score-file is empty" ch5 --score-file ''
expect 2 "--prompt is empty" ch5 --prompt ''
expect 2 "--prompt: 'é' (U+00E9) at position 0 is not in" ch5 --prompt 'é'
expect 2 "--tokens must be in [0, 100000], got 1000000" ch5 --tokens 1000000
expect 2 "--top-p must be in [" ch5 --top-p 0
expect 2 "--layers must be in [1, 4096], got 0" ch5 --layers 0
expect 2 "--dropout must be in [0, 0.99], got 1" ch5 --dropout 1
expect 2 "--bias expects 0 or 1, got '2'" ch5 --bias=2
expect 2 "--window must be slide or exact" ch5 --window wide
expect 2 "needs" ch5 --embd 4096 --layers 400
expect 2 "give one text" ch5 --score ab --score-file "$TMP/short.txt"
expect 1 "cannot open $TMP/none.txt" ch5 --score-file "$TMP/none.txt"
(cd "$TMP" && expect 1 "make data" ch5)
# a thread count past the machine's cores is capped, and said, in one
# note that every program taking --threads prints the same way
# (common/threads.c; ch6's and ch7's cases are further down)
expect 0 "ch5: note: --threads 100000, but this" ch5 --threads 100000 \
    --sample-only --tokens 1
threads_note() {   # threads_note PROG: the note was the one stderr line
    grep -qE "^$1: note: --threads 1024, but this (machine has|process \
may run on) [0-9]+ cores?: using [0-9]+\$" "$TMP/err" \
        && [ "$(wc -l <"$TMP/err")" = 1 ] \
        || fail "$1 --threads 1024: not capped with one note"
}
# ch5: scoring any text of 2 characters or more, from a flag or a file
expect 2 "scoring needs at least 2" ch5 --score a
expect 0 "loss " ch5 --score ab
expect 0 "loss " ch5 --score abcdefghij
cp "$TMP/out" "$TMP/score_text"
expect 0 "loss " ch5 --score-file "$TMP/short.txt"
cmp -s "$TMP/out" "$TMP/score_text" || \
    fail "ch5: --score-file and --score of the same text differ"
head -c 300 "$ROOT/data/tinyshakespeare.txt" >"$TMP/long.txt"
expect 0 "loss " ch5 --score-file "$TMP/long.txt"
# ch5: the report has the chapter header; --sample-only only the sample
expect 0 "== Chapter 5: the whole GPT ==" ch5 --tokens 1
expect 0 "ROMEO:" ch5 --sample-only --tokens 20 --prompt ROMEO:
if grep -qE '^(== |model|parameters|sample|speed|----)' "$TMP/out" \
   || [ "$(head -c 6 "$TMP/out")" != "ROMEO:" ]; then
    fail "ch5 --sample-only printed more than the sample"
fi

# ch6: a tiny model, so that a run takes a moment
tiny=(--layers 1 --heads 1 --embd 8 --block 8 --batch 2 --eval-iters 1
      --sample-chars 0 --quiet --threads 1)
expect 2 "--lr must be in [" ch6 --lr -1
# a run shorter than its warmup never reaches the peak: the header says so
expect 0 "" ch6 "${tiny[@]}" --steps 2
said "(warmup 100: the run ends before the peak, no cosine)" \
    || fail "ch6 --steps 2: the header does not say the run ends in its warmup"
expect 2 "--eval-iters must be in [1, 10000], got 100000000" ch6 \
    --eval-iters 100000000
# a full disk under the output: stopped before the training, not after it
# (which would have saved the model first)
runs=$((runs + 1))
"$BIN/ch6" "${tiny[@]}" --steps 50 --out "$TMP/full" >/dev/full 2>"$TMP/err"
rc=$?
[ "$rc" = 1 ] && grep -qF "cannot write the output: No space left" "$TMP/err" \
    && [ ! -e "$TMP/full/model.safetensors" ] \
    || fail "ch6 >/dev/full: status $rc, trained or no message: $(cat "$TMP/err")"
expect 2 "--batch must be in [1, " ch6 --batch 0
expect 2 "--bias must be in [0, 1], got 2" ch6 --bias=2
(cd "$TMP" && expect 1 "make data" ch6 --steps 1)
expect 1 "--log $TMP: cannot write it: Is a directory" ch6 "${tiny[@]}" \
    --steps 1 --log "$TMP"
[ -s "$TMP/out" ] && fail "ch6 --log DIR: printed a report before failing"
expect 0 "@ both" ch6 "${tiny[@]}" --steps 4 --warmup 1 --eval-every 2 \
    --out "$TMP/run" --log "$TMP/log.csv"
said "(warmup 1, cosine to step 4)" || fail "ch6: the schedule in the header"
# the CSV: a step's row has its batch loss, an evaluation's row the two
# evaluated losses, each in a column of its own
if [ "$(head -n 1 "$TMP/log.csv")" != \
     "step,batch_loss,eval_train_loss,eval_val_loss,lr,grad_norm,tokens_per_s" ] \
   || ! grep -qE '^2,[0-9.]+,,,[0-9.e-]+,[0-9.]+,[0-9]+$' "$TMP/log.csv" \
   || ! grep -qE '^2,,[0-9.]+,[0-9.]+,,,$' "$TMP/log.csv"; then
    fail "ch6 --log: the CSV's columns"; cat "$TMP/log.csv" >&2
fi
expect 2 "--resume takes a run's folder, not a file" \
    ch6 --resume "$TMP/run/model.safetensors"
expect 2 "try --resume $TMP/run" ch6 --resume "$TMP/run/model.safetensors"
expect 1 "--resume $TMP/none: No such file or directory (give the --out DIR" \
    ch6 --resume "$TMP/none"
expect 2 "--lr cannot change on --resume" ch6 --resume "$TMP/run" --lr 1e-3
expect 0 "the saved cosine ends at step 4: steps 5 to 6 run at its floor" \
    ch6 --resume "$TMP/run" --steps 6 --eval-iters 1 --sample-chars 0 \
    --quiet --threads 1
expect 2 "already at step 6" ch6 --resume "$TMP/run" --steps 5
# a new run into a folder that holds one is refused, the saved run left
# byte for byte as it was; --overwrite replaces it, --resume goes on
cp -r "$TMP/run" "$TMP/run6"
expect 2 "$TMP/run holds a run (step 6): --resume $TMP/run, another --out, \
or --overwrite" ch6 \
    "${tiny[@]}" --steps 2 --out "$TMP/run"
diff -r "$TMP/run" "$TMP/run6" >/dev/null \
    || fail "ch6 --out over a saved run: the run's files changed"
expect 2 "--overwrite replaces the run saved in --out DIR: give --out too" \
    ch6 "${tiny[@]}" --steps 2 --overwrite
expect 0 "saved       $TMP/run/model.safetensors" ch6 "${tiny[@]}" --steps 2 \
    --out "$TMP/run" --overwrite
[ "$(ls "$TMP/run" | tr '\n' ' ')" = \
  "model.safetensors state-2.safetensors " ] \
    || fail "ch6 --overwrite: the folder holds $(ls "$TMP/run" | tr '\n' ' ')"
expect 0 "resumed     $TMP/run at step 2 of 3" ch6 --resume "$TMP/run" \
    --steps 3 --eval-iters 1 --sample-chars 0 --quiet --threads 1
# (and a run resumed into another folder that holds a run)
expect 2 "$TMP/run holds a run (step 3): --resume $TMP/run" ch6 \
    --resume "$TMP/run6" --out "$TMP/run" --steps 7

# ch6: the time budget fixes the step count after the warmup's first
# steps; the run is then the one --steps N gives, bit for bit
expect 2 "--minutes needs --warmup 5 or more" ch6 --minutes 1 --warmup 2
# (a budget of 6 microseconds: spent before the probe's ten steps end, on
# any machine, so exactly the ten fit)
expect 0 "budget " ch6 "${tiny[@]}" --minutes 0.0000001 --warmup 10 \
    --eval-every 0
grep -q "10 of 1800 steps fit in 1e-07 minutes$" "$TMP/out" \
    && grep -q "^ *(--steps 10 repeats this run)$" "$TMP/out" \
    || fail "ch6 --minutes: the budget lines"
grep '^eval' "$TMP/out" >"$TMP/budget"
expect 0 "eval step 10:" ch6 "${tiny[@]}" --steps 10 --warmup 10 \
    --eval-every 0
grep '^eval' "$TMP/out" | cmp -s - "$TMP/budget" \
    || fail "ch6: --minutes and the --steps it printed train differently"
expect 0 "(default: 5)" ch6 --help
# --stop-at-val: the run ends at the first evaluation at or below it, and
# says when, in the words tests/bench/bench.py reads (step and seconds)
expect 0 "" ch6 "${tiny[@]}" --steps 100 --eval-every 5 --stop-at-val 4.3
grep -qE "^reached val 4\.[0-9]{4} <= 4\.3000 at step 5 after [0-9]+\.[0-9]{2} s$" \
    "$TMP/out" && grep -q "^summary: steps 5," "$TMP/out" \
    || fail "ch6 --stop-at-val: no 'reached ... after' line, or more steps"
grep -q "^model       1 layer, 1 head, 8 wide" "$TMP/out" \
    || fail "ch6: '1 layer, 1 head' in the model line"
expect 0 "(default: 0)" ch6 --preset notes --help
# (the last --threads given counts)
expect 0 "eval step 1:" ch6 "${tiny[@]}" --steps 1 --threads 1024
threads_note ch6
grep -q "1024 threads" "$TMP/out" \
    && fail "ch6 --threads 1024: the run line shows 1024 threads, not the cap"

# ch7
expect 2 "--task must be" ch7 --task translate-everything
expect 2 "--symbols must be in [" ch7 --symbols 0
expect 2 "--max-len must be in [9, " ch7 --min-len 9 --max-len 8
expect 2 "--beam must be in [" ch7 --beam 0
expect 2 "--save is empty" ch7 --save ''
expect 0 "held-out exact match" ch7 --symbols 3 --min-len 3 --max-len 3 \
    --held-out 2 --steps 1 --quiet --threads 1024 --save "$TMP/rev.st"
threads_note ch7
# chapter 7's run gives the same numbers on 1 thread and on 2 (its text
# says so): all but the speeds, the times and the memory (each thread
# has buffers of its own)
for t in 1 2; do
    expect 0 "step 60: held-out exact match" ch7 --steps 60 --eval-every 30 \
        --print-every 30 --threads $t
    sed -E 's/ +[0-9]+ tok\/s.*//; s/ +\[[0-9.]+ s\]$//
            s/memory estimated [0-9]+ MiB/memory estimated N MiB/' \
        "$TMP/out" >"$TMP/run$t"
done
cmp -s "$TMP/run1" "$TMP/run2" \
    || fail "ch7: 1 thread and 2 give other numbers: $(diff "$TMP/run1" \
"$TMP/run2" | head -n 4)"
# chapter 7 lists every key of its checkpoints' metadata, and only those
# (its section "Saving and loading": a line "* `key`, ..." each)
n=$(od -An -tu8 -N8 "$TMP/rev.st" | tr -d ' ')
tail -c +9 "$TMP/rev.st" | head -c "$n" | sed -e 's/\\"//g' \
    -e 's/^{"__metadata__":{//' -e 's/"},".*//' | grep -o '"[a-z_]*":"' |
    tr -d '":' | sort >"$TMP/keys.file"
awk '/^## / { in_s = $0 == "## Saving and loading" } in_s && /^\* `[a-z_]+`/ {
        sub(/^\* `/, ""); sub(/`.*/, ""); print }' \
    "$ROOT/chapters/ch7_encdec/ch7.md" | sort >"$TMP/keys.book"
[ -s "$TMP/keys.file" ] && cmp -s "$TMP/keys.file" "$TMP/keys.book" \
    || fail "ch7.md lists the metadata keys $(echo $(cat "$TMP/keys.book")), \
a checkpoint has $(echo $(cat "$TMP/keys.file"))"

# ch7 --bleu: scores two files and exits, without training; the lines are
# sacreBLEU's (`sacrebleu REF -i HYP -m bleu chrf -w 2`)
printf 'A man rides.\nhello there , x\n' >"$TMP/hyp.txt"
printf 'A man is riding.\nhello there, y\n' >"$TMP/ref.txt"
printf 'A man rides.\n' >"$TMP/one.txt"
expect 0 "BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0 = \
34.53 75.0/50.0/25.0/25.0 (BP = 0.882 ratio = 0.889 hyp_len = 8 ref_len = 9)" \
    ch7 --bleu "$TMP/hyp.txt" "$TMP/ref.txt"
grep -qxF "chrF2|nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|\
version:2.6.0 = 56.84" "$TMP/out" || fail "ch7 --bleu: no chrF2 line"
[ "$(wc -l <"$TMP/out")" = 2 ] || fail "ch7 --bleu printed more than 2 lines"
expect 0 "case:lc" ch7 --bleu "$TMP/hyp.txt" "$TMP/ref.txt" --lowercase
expect 1 "has 1 lines but" ch7 --bleu "$TMP/one.txt" "$TMP/ref.txt"
expect 1 "cannot open $TMP/none.txt" ch7 --bleu "$TMP/none.txt" "$TMP/ref.txt"
expect 2 "--bleu needs two files" ch7 --bleu "$TMP/hyp.txt"
expect 2 "got '--steps'" ch7 --bleu "$TMP/hyp.txt" "$TMP/ref.txt" --steps 3
printf 'caf\xc3\n' >"$TMP/bad.txt"
expect 1 "hypothesis 1" ch7 --bleu "$TMP/bad.txt" "$TMP/one.txt"

# ch7 --task translate: the whole pipeline on Multi30k with a tiny model
# (BPE, batches, training, val and test BLEU, a checkpoint that
# translates); what it learns in 6 steps is nothing, what is tested is
# that every stage runs and reports
expect 2 "--tokenizer must be bpe or char" ch7 --task translate \
    --tokenizer words
expect 2 "need --checkpoint FILE" ch7 --translate "Ein Hund."
expect 1 "cannot open $TMP/none" ch7 --checkpoint "$TMP/none" --translate x
expect 0 "chrF2|nrefs:1" ch7 --task translate --merges 200 --embd 8 \
    --ffn 8 --heads 1 --layers 1 --steps 6 --beam 1 --show 1 --quiet \
    --save "$TMP/mt.safetensors"
for w in "tokenizer   BPE: " "batches     " "eval step 6 (epoch" \
         "BLEU|nrefs:1|case:mixed" "  reference  A man in an orange hat"; do
    grep -qF -- "$w" "$TMP/out" || fail "ch7 --task translate lacks '$w'"
done
# 6 steps of the preset's warmup of 400: said as chapter 6 says it
said "(warmup 400: the run ends before the peak, no cosine)" \
    || fail "ch7 --steps 6: the header does not say the run ends in its warmup"
expect 0 "stopped as asked at step 1" ch7 --task translate --merges 200 \
    --embd 8 --ffn 8 --heads 1 --layers 1 --steps 20 --warmup 2 \
    --stop-at-step 1 --beam 1 --show 0 --quiet --threads 1
said "(warmup 2, cosine to step 20)" || fail "ch7: the schedule in the header"
# --merges 0 (characters) makes sentences of up to about 200 tokens:
# the model grows to hold every val and test sentence, and says so, and
# the run goes through its evaluations to the test set, all 1000
# sentences; a --max-len given that cannot hold them is refused
expect 0 "test set (1000 sentences):" ch7 --task translate --merges 0 \
    --embd 8 --ffn 8 --heads 1 --layers 1 --steps 2 --beam 1 --show 0 \
    --quiet --threads 1
grep -qE "^max-len     [0-9]+ tokens, not 100: the longest sentence of the \
val and test sets,$" "$TMP/out" && grep -qF "eval step 2 (epoch" "$TMP/out" \
    || fail "ch7 --merges 0: no max-len line, or no evaluation"
expect 1 "val.de:6: more than 100 tokens: max_len cannot hold" \
    ch7 --task translate --merges 0 --max-len 100 --steps 2 --quiet
head -n 3 "$ROOT/data/multi30k/val.de" >"$TMP/three.de"
expect 0 "" ch7 --checkpoint "$TMP/mt.safetensors" --translate-file \
    "$TMP/three.de" --beam 2
[ "$(wc -l <"$TMP/out")" = 3 ] || fail "ch7 --translate-file: not 3 lines"
expect 1 "is a GPT for ./ch5 and ./ch6, not an encoder-decoder" \
    ch7 --checkpoint \
    "$ROOT/tests/reference/ch5_bias.safetensors" --translate x
# what is missing is named, not a file '' that cannot be opened
expect 2 "--checkpoint needs --translate or --translate-file" ch7 \
    --checkpoint "$TMP/mt.safetensors"
expect 2 "--translate is empty" ch7 --checkpoint "$TMP/mt.safetensors" \
    --translate ''
expect 2 "--translate-file is empty" ch7 --checkpoint "$TMP/mt.safetensors" \
    --translate-file ''
# an empty line translates to an empty line, in its place
{ sed -n 1p "$TMP/three.de"; echo; sed -n 2p "$TMP/three.de"; } \
    >"$TMP/gap.de"
expect 0 "" ch7 --checkpoint "$TMP/mt.safetensors" --translate-file \
    "$TMP/gap.de" --beam 1
[ "$(wc -l <"$TMP/out")" = 3 ] && [ -z "$(sed -n 2p "$TMP/out")" ] \
    && [ -n "$(sed -n 3p "$TMP/out")" ] \
    || fail "ch7 --translate-file: an empty line did not come back empty"

# Line ends (common/utf8.h): every text a program reads, from a file or
# the command line, takes Windows' "\r\n" and old Macs' lone "\r" as
# "\n". A file with them gives what its Unix twin gives, input by input.
# twins F: writes F.crlf and F.cr, the text of F with "\r\n" and "\r"
twins() {
    sed 's/$/\r/' "$1" >"$1.crlf"
    tr '\n' '\r' <"$1" >"$1.cr"
}
# same WHAT FILE...: the files are equal, or the test fails
same() {
    local what=$1 first=$2
    shift 2
    for f in "$@"; do
        cmp -s "$first" "$f" || { fail "$what: $f differs"; \
            diff "$first" "$f" | head -n 6 | cat -A >&2; }
    done
}
# ch1 --data (the vocabulary, the batches, the baselines) and --text
head -n 80 "$ROOT/data/tinyshakespeare.txt" >"$TMP/ts.txt"
twins "$TMP/ts.txt"
for f in ts.txt ts.txt.crlf ts.txt.cr; do
    expect 0 "vocabulary  " ch1 --data "$TMP/$f" --text "$(printf 'To\r\nbe')"
    grep -v '^corpus\|^time' "$TMP/out" >"$TMP/ch1.$f"
done
expect 0 "" ch1 --data "$TMP/ts.txt" --text "$(printf 'To\nbe')"
grep -v '^corpus\|^time' "$TMP/out" >"$TMP/ch1.lf"
same "ch1 with line ends \\r\\n or \\r" "$TMP/ch1.lf" "$TMP/ch1.ts.txt" \
    "$TMP/ch1.ts.txt.crlf" "$TMP/ch1.ts.txt.cr"
grep -q $'\r' "$TMP/ch1.ts.txt.crlf" && fail "ch1: a raw CR in its report"
# ch2 --text: the example's tokens
k=0
for t in 'ab\ncd' 'ab\r\ncd' 'ab\rcd'; do
    expect 0 "T=5" ch2 --text "$(printf "$t")" --max-T 64
    k=$((k + 1))
    sed -n '1,9p' "$TMP/out" >"$TMP/ch2.$k"
done
same "ch2 --text with line ends \\r\\n or \\r" "$TMP/ch2.1" "$TMP/ch2.2" \
    "$TMP/ch2.3"
# ch5 --score-file, --score and --prompt
for f in ts.txt ts.txt.crlf ts.txt.cr; do
    expect 0 "loss " ch5 --score-file "$TMP/$f"
    cp "$TMP/out" "$TMP/ch5.$f"
done
same "ch5 --score-file with line ends \\r\\n or \\r" "$TMP/ch5.ts.txt" \
    "$TMP/ch5.ts.txt.crlf" "$TMP/ch5.ts.txt.cr"
k=0
for t in 'ab\ncd' 'ab\r\ncd' 'ab\rcd'; do
    k=$((k + 1))
    expect 0 "loss " ch5 --score "$(printf "$t")"
    cp "$TMP/out" "$TMP/score.$k"
    expect 0 "" ch5 --sample-only --tokens 8 --temperature 0 --prompt \
        "$(printf "$t")"
    cp "$TMP/out" "$TMP/prompt.$k"
done
same "ch5 --score with line ends" "$TMP/score.1" "$TMP/score.2" \
    "$TMP/score.3"
same "ch5 --prompt with line ends" "$TMP/prompt.1" "$TMP/prompt.2" \
    "$TMP/prompt.3"
# ch6 --data: two steps train the same model
for f in ts.txt ts.txt.crlf; do
    expect 0 "" ch6 --layers 1 --heads 1 --embd 8 --block 8 --batch 2 \
        --eval-iters 1 --sample-chars 0 --quiet --threads 1 --steps 2 \
        --warmup 1 --eval-every 0 --data "$TMP/$f" --out "$TMP/run.$f"
done
same "ch6 --data with line ends \\r\\n" "$TMP/run.ts.txt/model.safetensors" \
    "$TMP/run.ts.txt.crlf/model.safetensors"
# ch7 --translate-file and --translate
twins "$TMP/gap.de"
for f in gap.de gap.de.crlf gap.de.cr; do
    expect 0 "" ch7 --checkpoint "$TMP/mt.safetensors" --translate-file \
        "$TMP/$f" --beam 2
    cp "$TMP/out" "$TMP/mt.$f"
done
same "ch7 --translate-file with line ends \\r\\n or \\r" "$TMP/mt.gap.de" \
    "$TMP/mt.gap.de.crlf" "$TMP/mt.gap.de.cr"
line=$(head -n 1 "$TMP/gap.de")
k=0
for t in "$line" "$line"$'\r' "$line"$'\r\n'; do
    k=$((k + 1))
    expect 0 "" ch7 --checkpoint "$TMP/mt.safetensors" --translate "$t" \
        --beam 1
    cp "$TMP/out" "$TMP/one.$k"
done
same "ch7 --translate with line ends" "$TMP/one.1" "$TMP/one.2" \
    "$TMP/one.3"
# ch7 --bleu: both files
twins "$TMP/hyp.txt"
twins "$TMP/ref.txt"
for e in "" .crlf .cr; do
    expect 0 "BLEU|" ch7 --bleu "$TMP/hyp.txt$e" "$TMP/ref.txt$e"
    cp "$TMP/out" "$TMP/bleu$e"
done
same "ch7 --bleu with line ends \\r\\n or \\r" "$TMP/bleu" "$TMP/bleu.crlf" \
    "$TMP/bleu.cr"
# ch7 --task translate: Multi30k's lines (the tokenizer learnt, the
# pairs) from a copy of its start, and the same with "\r\n"
mkdir -p "$TMP/m30k" "$TMP/m30k.crlf"
for f in train.de train.en val.de val.en test_2016_flickr.de \
         test_2016_flickr.en; do
    n=200; case $f in train.*) n=2000 ;; esac
    head -n $n "$ROOT/data/multi30k/$f" >"$TMP/m30k/$f"
    sed 's/$/\r/' "$TMP/m30k/$f" >"$TMP/m30k.crlf/$f"
done
for d in m30k m30k.crlf; do
    expect 0 "" ch7 --task translate --data "$TMP/$d" --merges 200 \
        --max-len 300 --embd 8 --ffn 8 --heads 1 --layers 1 --steps 2 --beam 1 \
        --show 0 --quiet --threads 1 --save "$TMP/$d.safetensors"
done
same "ch7 --task translate with line ends \\r\\n" "$TMP/m30k.safetensors" \
    "$TMP/m30k.crlf.safetensors"

# ch7 --task translate with --out: a run stopped at step 3 and resumed
# ends with the files of the run that never stopped, byte for byte
mt=(--task translate --merges 200 --embd 8 --ffn 8 --heads 1 --layers 1
    --batch-tokens 500 --steps 6 --beam 1 --show 0 --quiet --threads 1)
expect 0 "saved       $TMP/mtA/model.safetensors" ch7 "${mt[@]}" \
    --out "$TMP/mtA" --log "$TMP/mt.csv"
if [ "$(head -n 1 "$TMP/mt.csv")" != \
     "step,loss,nll,lr,grad_norm,tokens_per_s,val_nll,val_bleu" ] \
   || ! grep -qE '^3,[0-9.]+,[0-9.]+,[0-9.e-]+,[0-9.]+,[0-9]+,,$' "$TMP/mt.csv" \
   || ! grep -qE '^6,,,,,,[0-9.]+,[0-9.]+$' "$TMP/mt.csv"; then
    fail "ch7 --log: the CSV's columns"; cat "$TMP/mt.csv" >&2
fi
expect 0 "stopped as asked at step 3; saved in $TMP/mtB: ./ch7 --resume" \
    ch7 "${mt[@]}" --out "$TMP/mtB" --stop-at-step 3
grep -qF "test set" "$TMP/out" && fail "ch7 --stop-at-step: went on to test"
expect 0 "resumed     $TMP/mtB at step 3 of 6" ch7 --resume "$TMP/mtB" \
    --quiet --threads 1 --beam 1 --show 0
for f in model.safetensors state-6.safetensors; do
    cmp -s "$TMP/mtA/$f" "$TMP/mtB/$f" || fail "ch7 --resume: $f differs"
done
expect 1 "cannot save checkpoints in $TMP/mtA/model.safetensors: not a" \
    ch7 "${mt[@]}" --out "$TMP/mtA/model.safetensors"
grep -qF "tokenizer" "$TMP/out" && fail "ch7 --out FILE: trained before failing"
expect 2 "--embd cannot change on --resume" ch7 --resume "$TMP/mtB" --embd 4
expect 2 "already at step 6" ch7 --resume "$TMP/mtB" --steps 5
expect 1 "cannot open $TMP/none/translate.json" ch7 --resume "$TMP/none"
expect 2 "give one" ch7 --resume "$TMP/mtB" --checkpoint "$TMP/mt.safetensors"
# as ch6: a new run into mtA, which holds one, is refused and leaves it
# byte for byte; --overwrite replaces it, and --resume goes on with that
cp -r "$TMP/mtA" "$TMP/mtA6"
expect 2 "$TMP/mtA holds a run (step 6): --resume $TMP/mtA, another --out, \
or --overwrite" ch7 "${mt[@]}" \
    --out "$TMP/mtA"
grep -qF "tokenizer" "$TMP/out" && fail "ch7 --out over a run: trained first"
diff -r "$TMP/mtA" "$TMP/mtA6" >/dev/null \
    || fail "ch7 --out over a saved run: the run's files changed"
expect 2 "--overwrite replaces the run saved in --out DIR: give --out too" \
    ch7 "${mt[@]}" --overwrite
expect 0 "saved       $TMP/mtA/model.safetensors" ch7 "${mt[@]}" --steps 2 \
    --out "$TMP/mtA" --overwrite
[ "$(ls "$TMP/mtA" | tr '\n' ' ')" = \
  "model.safetensors state-2.safetensors translate.json " ] \
    || fail "ch7 --overwrite: the folder holds $(ls "$TMP/mtA" | tr '\n' ' ')"
expect 0 "resumed     $TMP/mtA at step 2 of 3" ch7 --resume "$TMP/mtA" \
    --steps 3 --quiet --threads 1 --beam 1 --show 0
# the time budget: a run cut after its probe's 11 steps is the one
# --steps 11 gives, bit for bit
mtb=(--task translate --merges 200 --embd 8 --ffn 8 --heads 1 --layers 1
     --batch-tokens 500 --beam 1 --show 0 --quiet --threads 1 --epochs 1)
expect 0 "budget      11 of " ch7 "${mtb[@]}" --minutes 0.0000001 \
    --out "$TMP/mtC"
expect 0 "" ch7 "${mtb[@]}" --steps 11 --out "$TMP/mtD"
cmp -s "$TMP/mtC/model.safetensors" "$TMP/mtD/model.safetensors" \
    || fail "ch7 --minutes: not the run --steps 11 gives"
expect 2 "--minutes needs --warmup 11" ch7 --task translate --warmup 5
expect 2 "--preset must be default or base" ch7 --task translate --preset big
expect 0 "d_model: channels, in [1, 4096] (default: 512)" ch7 --task translate \
    --preset base --help

# --plot-data DIR: the CSV files behind the book's figures. A DIR that
# cannot be written fails with one line and status 1 before any report;
# a missing one is created. Each CSV is checked against numbers known
# without the program: counts of a text written here, sin and cos, the
# causal mask's zeros, GELU'(0) = 1/2, parameters counted by hand.
plot_bad() {   # plot_bad PROG ARGS...: the ARGS end in a bad --plot-data
    local prog=$1
    expect 1 "--plot-data $TMP/short.txt" "$@"
    [ "$(wc -l <"$TMP/err")" = 1 ] \
        || fail "$prog --plot-data: not one error line"
    [ -s "$TMP/out" ] && fail "$prog --plot-data: printed a report first"
}
printf 'abababababababababab' >"$TMP/ab.txt"   # train: the first 18
plot_bad ch1 --data "$TMP/ab.txt" --block 4 --plot-data "$TMP/short.txt"
plot_bad ch1 --data "$TMP/ab.txt" --block 4 --plot-data \
    "$TMP/short.txt/sub"
expect 1 "--plot-data is empty" ch1 --plot-data ''
expect 0 "plot data   $TMP/p1/unigram.csv" ch1 --data "$TMP/ab.txt" \
    --block 4 --batch 1 --plot-data "$TMP/p1"
printf 'id,char,count\n0,a,9\n1,b,9\n' | cmp -s - "$TMP/p1/unigram.csv" \
    || { fail "ch1 --plot-data: unigram.csv"; cat "$TMP/p1/unigram.csv" >&2; }
printf 'prev,next,count\n0,0,0\n0,1,9\n1,0,8\n1,1,0\n' \
    | cmp -s - "$TMP/p1/bigram.csv" \
    || { fail "ch1 --plot-data: bigram.csv"; cat "$TMP/p1/bigram.csv" >&2; }
plot_bad ch2 --text 'a,c' --max-T 64 --plot-data "$TMP/short.txt"
expect 0 "plot data   $TMP/p2/attention.csv" ch2 --text 'a,c' --max-T 64 \
    --plot-data "$TMP/p2"
if [ "$(head -n 1 "$TMP/p2/attention.csv")" != \
     "query,key,query_char,key_char,causal,unmasked" ] \
   || [ "$(wc -l <"$TMP/p2/attention.csv")" != 10 ] \
   || ! grep -qE '^0,0,a,a,1\.000000,0\.[0-9]{6}$' "$TMP/p2/attention.csv" \
   || ! grep -qE '^0,1,a,",",0\.000000,0\.[0-9]{6}$' "$TMP/p2/attention.csv" \
   || grep -qE '^0,1,a,",",0\.000000,0\.000000$' "$TMP/p2/attention.csv" \
   || ! grep -qE '^2,1,c,",",0\.[0-9]{6},' "$TMP/p2/attention.csv"; then
    fail "ch2 --plot-data: attention.csv"; cat "$TMP/p2/attention.csv" >&2
fi
# sums_to_one FILE K: the weights in the K-th column from the end (0: the
# last; counted from the end because a label may be a quoted comma) of
# each query (column 1) sum to 1
sums_to_one() {
    awk -F, -v k="$2" 'NR > 1 { s[$1] += $(NF - k) }
        END { for (q in s) if (s[q] < 0.99999 || s[q] > 1.00001) exit 1 }' \
        "$1"
}
for k in 0 1; do
    sums_to_one "$TMP/p2/attention.csv" $k \
        || fail "ch2 --plot-data: rows that do not sum to 1 ($k from the end)"
done
# saturation.csv: a row per d_k = 1, 2, ..., 512, scaled then not. Known
# without the program: q.k of N(0, 1) vectors has variance d_k, so the
# scores' std is 1 scaled and sqrt(d_k) not (to 5%, over 131,072 scores);
# at d_k = 1 the scale is 1 and both rows are the same; a row's largest
# weight is in [1/128, 1] and its entropy in [0, ln 128]; unscaled rows are
# more peaked from d_k = 4 on. The table's rows for 32 and 128 must be the
# CSV's, rounded.
grep -qxF "plot data   $TMP/p2/saturation.csv" "$TMP/out" \
    || fail "ch2 --plot-data: no line for saturation.csv"
if [ "$(head -n 1 "$TMP/p2/saturation.csv")" != \
     "d_k,scaled,score_std,max_weight,entropy,one_minus_sum_p2" ] \
   || ! awk -F, 'NR == 1 { next }
        { n++; dk = 2 ^ int((n - 1) / 2); sc = n % 2
          if ($1 != dk || $2 != sc || NF != 6) exit 1
          for (i = 3; i <= 6; i++)
              if ($i !~ /^[0-9]+\.[0-9][0-9][0-9][0-9][0-9][0-9]$/) exit 1
          want = sc ? 1 : sqrt(dk)
          if ($3 < 0.95 * want || $3 > 1.05 * want) exit 1
          if ($4 < 1 / 128 || $4 > 1 || $5 > log(128) || $6 > 1 - 1 / 128)
              exit 1
          if (!sc && dk == 1 && $3 $4 $5 $6 != s3 s4 s5 s6) exit 1
          if (!sc && dk >= 4 && ($4 <= s4 || $5 >= s5)) exit 1
          s3 = $3; s4 = $4; s5 = $5; s6 = $6 }
        END { if (n != 20) exit 1 }' "$TMP/p2/saturation.csv"; then
    fail "ch2 --plot-data: saturation.csv"; cat "$TMP/p2/saturation.csv" >&2
fi
for dk in 32 128; do
    for sc in 1 0; do
        row=$(awk -F, -v dk=$dk -v sc=$sc '$1 == dk && $2 == sc {
            printf "%.2f %.4f %.2f %.3f", $3, $4, $5, $6 }' \
            "$TMP/p2/saturation.csv")
        grep -qE "^ +$dk +(1/sqrt\($dk\)|none) +${row// / +}\$" \
            "$TMP/out" && [ -n "$row" ] \
            || fail "ch2 --plot-data: saturation.csv's d_k=$dk scaled=$sc" \
                    "is not the table's row"
    done
done
# timing.csv: 16 evenly spaced T up to --max-T 64, a time in ms for each
grep -qxF "plot data   $TMP/p2/timing.csv" "$TMP/out" \
    || fail "ch2 --plot-data: no line for timing.csv"
if [ "$(head -n 1 "$TMP/p2/timing.csv")" != "T,layer_ms,core_ms" ] \
   || ! awk -F, 'NR > 1 { n++
          if ($1 != 4 * n || NF != 3) exit 1
          for (i = 2; i <= 3; i++)
              if ($i !~ /^[0-9]+\.[0-9][0-9][0-9][0-9]$/ || $i <= 0) exit 1 }
        END { if (n != 16) exit 1 }' "$TMP/p2/timing.csv"; then
    fail "ch2 --plot-data: timing.csv"; cat "$TMP/p2/timing.csv" >&2
fi
plot_bad ch3 --max-T 64 --plot-data "$TMP/short.txt"
expect 0 "plot data   $TMP/p3/activations.csv" ch3 --max-T 64 --plot-data \
    "$TMP/p3"
if [ "$(head -n 1 "$TMP/p3/activations.csv")" != \
     "x,relu,relu_grad,gelu,gelu_grad,gelu_tanh,gelu_tanh_grad" ] \
   || [ "$(wc -l <"$TMP/p3/activations.csv")" != 402 ] \
   || [ "$(sed -n 2p "$TMP/p3/activations.csv" | cut -d, -f1-3)" != \
        "-4.00,0.000000,0.000000" ] \
   || ! grep -qxF "0.00,0.000000,0.000000,0.000000,0.500000,0.000000,0.500000" \
        "$TMP/p3/activations.csv" \
   || [ "$(tail -n 1 "$TMP/p3/activations.csv" | cut -d, -f1-3)" != \
        "4.00,4.000000,1.000000" ]; then
    fail "ch3 --plot-data: activations.csv"
fi
# timing.csv: 16 evenly spaced T up to --max-T 64, two times in ms, and
# the FLOP ratio 4C / (2C + T) at C = 128
grep -qxF "plot data   $TMP/p3/timing.csv" "$TMP/out" \
    || fail "ch3 --plot-data: no line for timing.csv"
if [ "$(head -n 1 "$TMP/p3/timing.csv")" != \
     "T,attention_ms,ffn_ms,flops_ratio" ] \
   || ! awk -F, 'NR > 1 { n++
          if ($1 != 4 * n || NF != 4) exit 1
          for (i = 2; i <= 3; i++)
              if ($i !~ /^[0-9]+\.[0-9][0-9][0-9][0-9]$/ || $i <= 0) exit 1
          if ($4 != sprintf("%.6f", 512 / (256 + $1))) exit 1 }
        END { if (n != 16) exit 1 }' "$TMP/p3/timing.csv"; then
    fail "ch3 --plot-data: timing.csv"; cat "$TMP/p3/timing.csv" >&2
fi
# depth.csv: the deepest stack, block by block, each init and each norm,
# once even when its depth is given twice; its first and last blocks must
# be the table's columns (the input's gradient is block 1's input_grad)
plot_bad ch4 --depths 2 --channels 8 --heads 2 --plot-data "$TMP/short.txt"
expect 0 "plot data   $TMP/p4/depth.csv" ch4 --depths 3,2,3 --channels 8 \
    --heads 2 --plot-data "$TMP/p4"
if [ "$(head -n 1 "$TMP/p4/depth.csv")" != \
     "init,norm,block,param_grad,input_grad" ] \
   || ! awk -F, 'NR > 1 { n++; k = n - 1
          if ($1 != (k < 6 ? "gpt2" : "2017") || NF != 5) exit 1
          if ($2 != (k % 6 < 3 ? "pre" : "post") || $3 != k % 3 + 1) exit 1
          for (i = 4; i <= 5; i++)
              if ($i !~ /^[0-9]+\.[0-9][0-9][0-9][0-9][0-9][0-9]$/) exit 1 }
        END { if (n != 12) exit 1 }' "$TMP/p4/depth.csv"; then
    fail "ch4 --plot-data: depth.csv"; cat "$TMP/p4/depth.csv" >&2
fi
for init in gpt2 2017; do
    line=$(awk -F, -v init=$init '$1 == init {
            k = ($2 == "post"); v[$3, k] = $4; if ($3 == 1) dx[k] = $5 }
        END { printf "%5d %7.3f %7.3f  %7.3f %7.3f  %7.3f %7.3f", 3,
              dx[0], dx[1], v[1, 0], v[1, 1], v[3, 0], v[3, 1] }' \
        "$TMP/p4/depth.csv")
    grep -qF -- "$line" "$TMP/out" \
        || fail "ch4 --plot-data: depth.csv's $init rows are not the table's"
done
plot_bad ch5 --tokens 0 --plot-data "$TMP/short.txt"
expect 0 "plot data   $TMP/p5/positional.csv" ch5 --block 4 --embd 6 \
    --heads 2 --tokens 0 --plot-data "$TMP/p5"
# sin(1) = 0.841471, cos(1) = 0.540302; channel 5 turns at 10000^(-4/6)
if [ "$(head -n 1 "$TMP/p5/positional.csv")" != "position,channel,value" ] \
   || [ "$(wc -l <"$TMP/p5/positional.csv")" != 25 ] \
   || ! grep -qxF "0,1,1.000000" "$TMP/p5/positional.csv" \
   || ! grep -qxF "1,0,0.841471" "$TMP/p5/positional.csv" \
   || ! grep -qxF "1,1,0.540302" "$TMP/p5/positional.csv" \
   || ! grep -qxF "3,4,0.006463" "$TMP/p5/positional.csv"; then
    fail "ch5 --plot-data: positional.csv"; cat "$TMP/p5/positional.csv" >&2
fi
# the parameters of V = 65, C = 6, T = 4, L = 4 by the chapter's formulas:
# VC, TC, then per block 2C, 3C^2 + C^2 and 4C^2 + 4C^2 (x 4), and C
printf '%s\n' tensor,part,layers,params,percent \
    "transformer.wte.weight,token embedding,1,390,17.8" \
    "transformer.wpe.weight,position embedding,1,24,1.1" \
    "transformer.h.0.ln_1.weight,LayerNorm,4,24,1.1" \
    "transformer.h.0.attn.c_attn.weight,attention,4,432,19.7" \
    "transformer.h.0.attn.c_proj.weight,attention,4,144,6.6" \
    "transformer.h.0.ln_2.weight,LayerNorm,4,24,1.1" \
    "transformer.h.0.mlp.c_fc.weight,FFN,4,576,26.2" \
    "transformer.h.0.mlp.c_proj.weight,FFN,4,576,26.2" \
    "transformer.ln_f.weight,LayerNorm,1,6,0.3" \
    "lm_head.weight,LM head,1,0,0.0" | cmp -s - "$TMP/p5/params.csv" \
    || { fail "ch5 --plot-data: params.csv"; cat "$TMP/p5/params.csv" >&2; }
grep -qF "parameters  2196 in total" "$TMP/out" \
    || fail "ch5 --plot-data: params.csv's model is not the one printed"
# no generated token, no speed comparison: nothing to time
[ -e "$TMP/p5/generation.csv" ] \
    && fail "ch5 --plot-data --tokens 0: wrote generation.csv"
# with tokens, each one's time with and without the cache, in ms
expect 0 "plot data   $TMP/p5g/generation.csv" ch5 --block 4 --embd 6 \
    --heads 2 --tokens 10 --plot-data "$TMP/p5g"
if [ "$(head -n 1 "$TMP/p5g/generation.csv")" != \
     "token,cached_ms,uncached_ms" ] \
   || [ "$(wc -l <"$TMP/p5g/generation.csv")" != 11 ] \
   || [ "$(tail -n +2 "$TMP/p5g/generation.csv" | cut -d, -f1 | tr '\n' ' ')" \
        != "1 2 3 4 5 6 7 8 9 10 " ] \
   || tail -n +2 "$TMP/p5g/generation.csv" \
        | grep -qvE '^[0-9]+,[0-9]+\.[0-9]{4},[0-9]+\.[0-9]{4}$'; then
    fail "ch5 --plot-data: generation.csv"; cat "$TMP/p5g/generation.csv" >&2
fi
plot_bad ch6 "${tiny[@]}" --steps 1 --profile --plot-data "$TMP/short.txt"
expect 2 "--plot-data writes the profile: give --profile too" ch6 \
    "${tiny[@]}" --steps 1 --plot-data "$TMP/p6"
expect 0 "plot data   $TMP/p6/profile.csv" ch6 "${tiny[@]}" --steps 3 \
    --profile --plot-data "$TMP/p6"
# the kinds of common/profile.h in their order; in each row the total is
# forward + backward (each rounded to 4 places), and the shares sum to 100
if [ "$(head -n 1 "$TMP/p6/profile.csv")" != \
     "kind,forward_ms,backward_ms,total_ms,percent" ] \
   || [ "$(tail -n +2 "$TMP/p6/profile.csv" | cut -d, -f1 | tr '\n' '|')" \
        != "data (batches)|embedding|matmul (Linear)|attention core|\
normalisation|elementwise|loss (softmax + xent)|optimiser|" ] \
   || ! awk -F, 'NR > 1 {
            # (no {4}: mawk has no intervals)
            for (i = 2; i <= 4; i++)
                if ($i !~ /^[0-9]+\.[0-9][0-9][0-9][0-9]$/) bad = 1
            if ($5 !~ /^[0-9]+\.[0-9][0-9]$/) bad = 1
            d = $2 + $3 - $4
            if (d > 0.00015 || d < -0.00015) bad = 1
            sum += $5
        } END { exit bad || sum < 99.95 || sum > 100.05 }' \
        "$TMP/p6/profile.csv"; then
    fail "ch6 --plot-data: profile.csv"; cat "$TMP/p6/profile.csv" >&2
fi
ch7p=(--symbols 3 --min-len 3 --max-len 3 --held-out 2 --steps 2
      --eval-every 1 --quiet --threads 1)
plot_bad ch7 "${ch7p[@]}" --plot-data "$TMP/short.txt"
expect 0 "(plot data: $TMP/p7/cross_attention.csv)" ch7 "${ch7p[@]}" \
    --plot-data "$TMP/p7"
# reversing 3 letters: 4 output rows (3 letters, then <eos>) x 3 sources
if [ "$(head -n 1 "$TMP/p7/cross_attention.csv")" != \
     "output,source,decoder_input,predicts,source_token,weight" ] \
   || [ "$(wc -l <"$TMP/p7/cross_attention.csv")" != 13 ] \
   || ! grep -qE '^0,0,<bos>,[a-c],[a-c],0\.[0-9]{6}$' \
        "$TMP/p7/cross_attention.csv" \
   || ! grep -qE '^3,2,[a-c],<eos>,[a-c],0\.[0-9]{6}$' \
        "$TMP/p7/cross_attention.csv"; then
    fail "ch7 --plot-data: cross_attention.csv"
    cat "$TMP/p7/cross_attention.csv" >&2
fi
sums_to_one "$TMP/p7/cross_attention.csv" 0 \
    || fail "ch7 --plot-data: an output's weights do not sum to 1"
# --plot-data with --translate: the cross-attention of its translation
# (chapter 7's figure), a row per (output, source) pair, each output's
# weights summing to 1, the last output <eos>, a label holding a comma
# quoted; the translation printed is the same as without it
tr=(ch7 --checkpoint "$TMP/m30k.safetensors" --translate "Ein Hund, der läuft."
    --beam 1)
expect 0 "" "${tr[@]}"
cp "$TMP/out" "$TMP/tr.plain"
plot_bad ch7 "${tr[@]:1}" --plot-data "$TMP/short.txt"
expect 0 "" "${tr[@]}" --plot-data "$TMP/p7t"
cmp -s "$TMP/out" "$TMP/tr.plain" \
    || fail "ch7 --translate --plot-data: another output than without it"
csv=$TMP/p7t/translation_attention.csv
if [ "$(head -n 1 "$csv")" != "output,source,predicts,source_token,weight" ] \
   || ! awk -F, 'NR > 1 { if ($1 + 1 > T) T = $1 + 1; if ($2 + 1 > S) S = $2 + 1
                          if ($NF !~ /^[0-9]\.[0-9][0-9][0-9][0-9][0-9][0-9]$/) bad = 1 }
                 END { exit bad || T < 1 || S < 2 || NR - 1 != T * S }' "$csv" \
   || ! grep -qE '^0,0,[^,]+,Ein,0\.[0-9]+$' "$csv" \
   || ! grep -qE '^[0-9]+,[0-9]+,<eos>,' "$csv" \
   || ! grep -qE ',"[^"]*,[^"]*",0\.[0-9]+$' "$csv"; then
    fail "ch7 --translate --plot-data: translation_attention.csv"
    cat "$csv" >&2
fi
sums_to_one "$csv" 0 \
    || fail "ch7 --translate --plot-data: an output's weights do not sum to 1"
expect 2 "--plot-data needs --checkpoint FILE --translate TEXT" ch7 \
    --task translate --plot-data "$TMP/p7t"
expect 2 "--plot-data needs --checkpoint FILE --translate TEXT" ch7 --checkpoint \
    "$TMP/m30k.safetensors" --translate-file "$TMP/three.de" --plot-data \
    "$TMP/p7t"

# 80 columns: a program's report starts with its chapter's title line and
# keeps to 80 columns, so that a terminal of that width wraps nothing
# (--help is checked above). Exempt: what the model wrote (samples between
# "----" lines, translations), and sacreBLEU's signature lines, which keep
# sacreBLEU's format.
fits80() {   # fits80 WHAT: the report in $TMP/out, as above
    awk '/^----/ { s = !s; next } s { next }
         /[|]nrefs:/ || /^  (source|reference|greedy|beam) / { next }
         length($0) > 80 { print length($0) " columns: " $0 }' \
        "$TMP/out" >"$TMP/wide"
    if [ -s "$TMP/wide" ]; then
        fail "$1: lines over 80 columns"
        head -n 3 "$TMP/wide" >&2
    fi
}
narrow() {   # narrow PROG ARGS...
    local prog=$1
    expect 0 "" "$@"
    head -n 1 "$TMP/out" | grep -q "^== Chapter ${prog#ch}: " \
        || fail "$*: the first line is not the chapter's title"
    fits80 "$*"
}
narrow ch1
narrow ch2 --max-T 64
narrow ch3
narrow ch4
narrow ch5
narrow ch6 "${tiny[@]/--quiet/--profile}" --steps 12 --warmup 10 \
    --minutes 0.0000001 --eval-every 5 --sample-chars 100 --out "$TMP/r80"
grep -q "^budget      " "$TMP/out" && grep -q "^profile     " "$TMP/out" \
    && grep -q "^saved       " "$TMP/out" \
    || fail "ch6: the 80-column run lacks a line it is meant to check"
narrow ch6 --resume "$TMP/r80" --steps 14 --threads 1
narrow ch7
narrow ch7 --task translate --merges 200 --embd 8 --ffn 8 --heads 1 \
    --layers 1 --batch-tokens 500 --steps 3 --beam 2 --show 1 --threads 1

# ch7's one switch that is on: --help says how to turn it off, and the
# usual wrong way is named
expect 0 "--until-perfect[=0] " ch7 --help
expect 2 "--until-perfect is a switch: write --until-perfect=0" ch7 \
    --until-perfect 0

# ch8, built where nvcc is: chapter 6's flags, its own, and without a GPU
# an error for a run it cannot train, after the emulated self-check when
# it was started bare (a GPU machine trains instead: not run here)
if [ -x "$BIN/ch8" ]; then
    expect 0 "(default: " ch8 --help
    grep -qF -- "--flash" "$TMP/out" || fail "ch8 --help lacks --flash"
    grep -qF -- "--unfused" "$TMP/out" || fail "ch8 --help lacks --unfused"
    grep -qF -- "--graph" "$TMP/out" || fail "ch8 --help lacks --graph"
    grep -qF -- "--preset" "$TMP/out" || fail "ch8 --help lacks ch6's flags"
    expect 2 "unknown flag '--bogus'" ch8 --bogus
    expect 2 "--batch must be in [" ch8 --batch 0
    expect 0 "every kernel agrees with the CPU" ch8 --emulate
    expect 2 "--tf32 and --bf16 both set" ch8 --tf32 --bf16
    expect 2 "--causal-block must be in [0, 65536]" ch8 --causal-block -1
    if ! nvidia-smi -L >/dev/null 2>&1; then
        expect 1 "ch8: error: training needs a GPU: " ch8
        [ "$(wc -l <"$TMP/err")" = 1 ] \
            || fail "ch8 without a GPU: not one error line"
        head -n 1 "$TMP/out" | grep -q "^== Chapter 8: " \
            || fail "ch8: the first line is not the chapter's title"
        fits80 ch8
        grep -qF "no GPU here" "$TMP/out" || fail "ch8: no 'no GPU here'"
        grep -qF "every kernel agrees with the CPU" "$TMP/out" \
            || fail "ch8 without a GPU: no self-check"
        # no driver at all is said so, not as a driver that is too old
        if ! ldconfig -p 2>/dev/null | grep -qF libcuda.so.1; then
            grep -qF ": no NVIDIA driver or GPU found" "$TMP/err" \
                || fail "ch8 without a driver: $(cat "$TMP/err")"
        fi
        # asked to train: one line at once, no self-check, nothing saved
        expect 1 "training needs a GPU: " ch8 "${tiny[@]}" --steps 3 \
            --out "$TMP/r8"
        [ "$(wc -l <"$TMP/err")" = 1 ] && [ ! -s "$TMP/out" ] \
            && [ ! -e "$TMP/r8" ] \
            || fail "ch8 --steps 3 --out DIR without a GPU: more than one line"
    fi
fi

# ch8 --gpt2: chapter 9's fine-tuning on the GPU, with ./ch9 --finetune's
# flags (--model, --window, --sample-tokens; none that shapes a new model)
# and the GPU's; without a GPU, asked to train, one line at once
if [ -x "$BIN/ch8" ]; then
    help_ranges ch8 --gpt2
    expect 0 "usage: ch8 --gpt2 [flags]" ch8 --gpt2 --help
    for f in --model --window --sample-tokens --flash --bf16 --graph; do
        grep -qF -- "  $f " "$TMP/out" || fail "ch8 --gpt2 --help lacks $f"
    done
    grep -qF -- "--layers" "$TMP/out" && fail "ch8 --gpt2 --help: --layers"
    expect 2 "ch8 --gpt2: error: unknown flag '--preset'" ch8 --gpt2 \
        --preset notes
    if ! nvidia-smi -L >/dev/null 2>&1; then
        expect 1 "ch8: error: training needs a GPU: " ch8 --gpt2 \
            --model "$ROOT/tests/reference/ch9_ft" --steps 2 --out "$TMP/r8g"
        [ "$(wc -l <"$TMP/err")" = 1 ] && [ ! -s "$TMP/out" ] \
            && [ ! -e "$TMP/r8g" ] \
            || fail "ch8 --gpt2 without a GPU: more than one line"
    fi
fi

# ch9: GPT-2. OpenAI's weights are not here (make gpt2 needs a network):
# without them one line says how to get them, status 2; everything else
# runs on the tiny GPT-2 of tests/reference/ch9_ft (gen_ch9_ft.py: its
# tokenizer is ch9_tok's, trained on Tiny Shakespeare)
g9=(--model "$ROOT/tests/reference/ch9_ft" --threads 1)
(cd "$TMP" && expect 2 "ch9: error: no GPT-2 files in data/gpt2: run make \
gpt2" ch9)
(cd "$TMP" && expect 2 "run make gpt2" ch9 --finetune --steps 1)
(cd "$TMP" && expect 2 "run make gpt2" ch9 --tokenize hi)
expect 2 "$TMP has no config.json" ch9 --model "$TMP"
expect 2 "--model and --checkpoint: give one model" ch9 "${g9[@]}" \
    --checkpoint x
expect 2 "--decode: '2048' is no token id: the ids are 0 to 2047" ch9 \
    "${g9[@]}" --decode "5 2048"
# generation: its report, the text as it came, its speed
narrow ch9 "${g9[@]}" --tokens 40 --prompt "ROMEO:"
said "tokens/s (1 full pass over the context, slide window)" \
    || fail "ch9: no speed line"
sed -n '/^----$/,/^----$/p' "$TMP/out" | sed -n 2p | grep -q "^ROMEO:" \
    || fail "ch9: the text does not start with the prompt"
# the KV cache changes nothing but the speed, past the block of 128 too
# (the window slides); greedy is the same text whatever the seed
expect 0 "" ch9 "${g9[@]}" --tokens 200 --seed 4 --sample-only
cp "$TMP/out" "$TMP/cached"
expect 0 "" ch9 "${g9[@]}" --tokens 200 --seed 4 --sample-only --no-cache
cmp -s "$TMP/out" "$TMP/cached" || fail "ch9: --no-cache wrote another text"
expect 0 "" ch9 "${g9[@]}" --tokens 50 --greedy --seed 1 --sample-only
cp "$TMP/out" "$TMP/greedy"
expect 0 "" ch9 "${g9[@]}" --tokens 50 --greedy --seed 2 --sample-only
cmp -s "$TMP/out" "$TMP/greedy" || fail "ch9 --greedy: another text"
# the tokenizer's views: --tokenize's ids --decode back to the text
narrow ch9 "${g9[@]}" --tokenize "O Romeo, Romeo! wherefore art thou?"
said "35 bytes, " || fail "ch9 --tokenize: the text's size"
ids=$(sed -n 's/^ids  *//p' "$TMP/out")
expect 0 "" ch9 "${g9[@]}" --decode "$ids"
[ "$(sed -n '/^----$/,/^----$/p' "$TMP/out" | sed -n 2p)" = \
  "O Romeo, Romeo! wherefore art thou?" ] \
    || fail "ch9 --decode of --tokenize's ids: $(cat "$TMP/out")"
# fine-tuning through chapter 6's trainer: its report in 80 columns, its
# folder (the tokenizer's files, the Hugging Face copy), a resumed run,
# and the checkpoint and the copy generating the same text
f9=(--finetune "${g9[@]}" --eval-iters 2 --sample-tokens 30 --lr 1e-2)
narrow ch9 "${f9[@]}" --steps 12 --eval-every 6 --out "$TMP/r9"
said "batch 4 x 64 = 256 tokens/step" || fail "ch9 --finetune: the batch"
grep -q "^eval step 0: train " "$TMP/out" \
    || fail "ch9 --finetune: no evaluation before the training"
[ "$(grep -c '^---- sample' "$TMP/out")" = 3 ] \
    || fail "ch9 --finetune: samples before, at step 6 and after"
for f in model.safetensors state-12.safetensors vocab.json merges.txt \
         hf/config.json hf/model.safetensors hf/vocab.json hf/merges.txt; do
    [ -f "$TMP/r9/$f" ] || fail "ch9 --finetune --out: no $f"
done
narrow ch9 --finetune --resume "$TMP/r9" --steps 14 --threads 1
said "resumed $TMP/r9 at step 12 of 14" || fail "ch9: the resumed run"
expect 0 "" ch9 --checkpoint "$TMP/r9/model.safetensors" --tokens 30 \
    --sample-only --threads 1
cp "$TMP/out" "$TMP/ckpt"
expect 0 "" ch9 --model "$TMP/r9/hf" --tokens 30 --sample-only --threads 1
cmp -s "$TMP/out" "$TMP/ckpt" \
    || fail "ch9: the checkpoint and its Hugging Face copy write other texts"
expect 0 "--window N" ch9 --finetune --help
expect 2 "--window 129 is longer than the model's block of 128 tokens" ch9 \
    "${f9[@]}" --window 129
expect 2 "--preset'" ch9 --finetune --preset notes
expect 1 "holds a run on gpt2 tokens; ./ch6 trains on characters" ch6 \
    --resume "$TMP/r9"

echo "cli: $runs runs, $fails failure$([ $fails = 1 ] || echo s)"
[ "$fails" = 0 ]
