#!/usr/bin/env bash
# test_grade.sh OBJ - tests of `make check EXERCISES=DIR` on the folders
# that instructors really get; run by `make check` after the Check suites,
# with OBJ the build's object folder (build/cc).
# A copy of solutions/ in a folder whose name has a space, with one file
# deleted, one that does not compile, one that does not link and four that
# give wrong answers (two of them with the hints their messages must give),
# chapter 8's .cu files (one renamed, one that does not compile); the
# wrong level and an empty folder; a run of one test case.
# Then, from a student's tree whose exercises/ holds answers and a file
# that does not compile (tests/student_tree.sh): the stubs score 0, and
# that exercises/ graded; a run of one test case where no stub can stand
# in for the broken file.
set -u
make=${MAKE:-make}
obj=${1:?usage: test_grade.sh OBJ (the build folder, build/cc)}
for v in CK_RUN_SUITE CK_RUN_CASE CK_INCLUDE_TAGS CK_EXCLUDE_TAGS; do
    if [ -n "${!v:-}" ]; then
        echo "grader tests: skipped ($v selects part of the tests)"
        exit 0
    fi
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=build/grade-test
fails=0
fail() { echo "FAIL grader test: $*" >&2; fails=$((fails + 1)); }
# grade DIR [OUT]: make check EXERCISES=DIR, its output in $tmp/log
grade() {
    $make --no-print-directory check EXERCISES="$1" GRADE_OUT="${2:-$out}" \
        > "$tmp/log" 2>&1
}
# in_tree COMMAND...: COMMAND in the student's tree (below)
in_tree() { (cd "$tree" && "$@"); }
# score ID: that exercise's score in $out/results.json
score() {
    sed -n "s/.*\"number\": \"$1\", \"score\": \([0-9.]*\),.*/\1/p" \
        "$out/results.json"
}
total() { sed -n 's/^  "score": \([0-9.]*\),$/\1/p' "$1"; }
has() { grep -q -e "$2" "$1" || fail "$3 (no '$2' in $1)"; }
# has_below FILE ROW NOTE MESSAGE: a line matching ROW, then one matching
# NOTE (a note too long for its row goes on the lines below it)
has_below() {
    awk -v row="$2" -v note="$3" 'hit && $0 ~ note { found = 1 }
        { hit = $0 ~ row } END { exit !found }' "$1" \
        || fail "$4 (no '$2' above '$3' in $1)"
}
# fits80 FILE WHAT: the grade table in FILE (from its header to the lines
# after the total) keeps to 80 columns
fits80() {
    local wide
    wide=$(sed -n '/^ex    title/,/^wrote \|was not written$/p' "$1" |
           LC_ALL=C.UTF-8 awk 'length($0) > 80')
    [ -z "$wide" ] || fail "$2: table lines over 80 columns: $wide"
}
# the chapters' listings of a grading (tests/listings.sh)
. tests/listings.sh

# ---- a student's folder as an LMS gives it ---------------------------------
ex="$tmp/Jane Doe/exercises"
mkdir -p "$tmp/Jane Doe"
cp -r solutions "$ex"
rm "$ex/ch1/ex1_2_batch.c"                                    # absent: 3 pts
echo 'int broken(void) { return 1 }' >> "$ex/ch2/ex2_1_softmax.c"   # 2 pts
sed -i 's/inp\[i\] : 0\.0f/inp[i] : 0.5f/' "$ex/ch3/ex3_1_relu.c"  # 1 of 2
# a function renamed: compiles, does not link                         2 pts
sed -i 's/ex_clip_grad_norm(/ex_clip_grad_norm2(/' \
    "$ex/ch6/ex6_4_clip_grad_norm.c"
# chapter 8's .cu files: one under another name, one that does not compile
mv "$ex/ch8/ex8_1_gelu.cu" "$ex/ch8/ex8_1_my_gelu.cu"               # 2 pts
echo '__global__ void broken() { return 1 }' >> "$ex/ch8/ex8_3_matmul.cu"  # 0 of 4
# ex_decode returns 2 where it should return 0: a Check assertion fails
tac "$ex/ch1/ex1_1_vocab.c" | sed '0,/return 0;/s//return 2;/' | tac \
    > "$tmp/v.c" && mv "$tmp/v.c" "$ex/ch1/ex1_1_vocab.c"
# attention backward without its 1/sqrt(HS): the messages name the factor
sed -i 's|double scale = 1.0 / sqrt((double)HS);|double scale = 1.0;|' \
    "$ex/ch2/ex2_5_backward.c"                                      # 0 of 4
# the softmax kernel without the barrier between its tree's levels: the
# messages name a missing __syncthreads                              0 of 3
sed -i '/this level is done before the next reads it/d' \
    "$ex/ch8/ex8_2_softmax.cu"
rm -f "$out/results.json"
grade "$ex" || fail "grading '$ex' exited with $?"
cp "$tmp/log" "$tmp/log1"
if [ ! -f "$out/results.json" ]; then
    fail "no $out/results.json"
else
    [ "$(score 1.2)" = 0 ] || fail "absent 1.2 scored $(score 1.2)"
    [ "$(score 2.1)" = 0 ] || fail "1.2 with a syntax error scored $(score 2.1)"
    [ "$(score 3.1)" = 1 ] || fail "wrong ReLU scored $(score 3.1), not 1"
    [ "$(score 1.1)" = 1.5 ] || fail "wrong decode scored $(score 1.1)"
    [ "$(score 6.4)" = 0 ] || fail "6.4, not linking, scored $(score 6.4)"
    [ "$(score 5.6)" = 3 ] || fail "5.6 scored $(score 5.6), not 3"
    [ "$(score 8.1)" = 2 ] || fail "8.1 as ex8_1_my_gelu.cu scored $(score 8.1)"
    [ "$(score 8.3)" = 0 ] || fail "8.3 with a syntax error scored $(score 8.3)"
    [ "$(score 2.5)" = 0 ] || fail "2.5 without 1/sqrt(HS) scored $(score 2.5)"
    [ "$(score 8.2)" = 0 ] || fail "8.2 without a barrier scored $(score 8.2)"
    [ "$(total "$out/results.json")" = 111.5 ] \
        || fail "total $(total "$out/results.json"), not 132 - 20.5"
    j=$out/results.json
    has "$j" \
        '"output": "does not compile: 0 of 3 tests passed\\n.*ch2/ex2_1_softmax.c:[0-9:]* error: expected' \
        "the compiler's message is 2.1's output"
    has "$j" 'file missing: 0 of 3 tests passed\\nno ch1/ex1_2_\*\.c' \
        "1.2's output says the file is missing"
    has "$j" 'test \\"forward\\" (tests/ch3/test_ex3\.c:[0-9]*): relu' \
        "a failure names its test"
    call='ex_decode(&v, ids, n, back)'
    has "$j" "expected $call == 0, got $call == 2" \
        "a Check assertion reads as expected/got"
    has "$j" 'every differing element is 1\.7321x the expected value (sqrt(3)): a missing or extra factor' \
        "2.5's output names the missing factor"
    has "$j" 'test \\"matches chapter 2\\".*: a result that changes with the order the threads run in means a missing __syncthreads' \
        "8.2's output names a missing __syncthreads"
    if grep -q -e "$tmp" -e "$PWD" -e '[ "(]/[a-z]' "$j"; then
        fail "an absolute path in $j: $(grep -o -m 1 -e "$tmp" -e "$PWD" \
              -e '[ "(]/[a-z][^ ]*' "$j" | head -n 1)"
    fi
fi
has_below "$tmp/log1" '^2\.1 .* does not compile:$' \
    '^      ch2/ex2_1_softmax\.c:[0-9:]* error' "the table shows 2.1's first error"
has_below "$tmp/log1" '^1\.2 .* file missing:$' '^      no ch1/ex1_2_' \
    "the table shows that 1.2 is missing"
has_below "$tmp/log1" '^8\.3 .* does not compile:$' \
    '^      ch8/ex8_3_matmul\.cu:[0-9:]* error' "the table shows 8.3's first error"
has_below "$tmp/log1" '^6\.4 .* does not compile:$' \
    '^      ch6/ex6_4_clip_grad_norm\.c does not link' \
    "the table shows that 6.4 does not link"
fits80 "$tmp/log1" "a folder with missing and broken files"
has "$tmp/log1" "undefined reference to .ex_clip_grad_norm'" \
    "the linker's message is shown"

# ---- one test case: no grade, and results.json as it was -------------------
cp "$out/results.json" "$tmp/before.json" 2>/dev/null
CK_RUN_CASE=ex1.1 grade "$ex" || fail "CK_RUN_CASE=ex1.1 exited with $?"
cmp -s "$out/results.json" "$tmp/before.json" \
    || fail "CK_RUN_CASE=ex1.1 rewrote results.json"
has "$tmp/log" 'CK_RUN_CASE=ex1.1 ran part of the tests' "a partial run says so"
rows=$(grep -c '^[1-9]\.[1-9] ' "$tmp/log")
[ "$rows" = 1 ] || fail "CK_RUN_CASE=ex1.1 showed $rows rows, not 1"
fits80 "$tmp/log" "CK_RUN_CASE=ex1.1"

# ---- the wrong level, an empty folder: one clear line, no grade --------------
mkdir -p "$tmp/empty"
for d in "$tmp/Jane Doe" "$tmp/empty"; do
    if grade "$d"; then fail "grading '$d' succeeded"; fi
    has "$tmp/log" '^error: no ch1/ex1_1_\*\.c .*laid out' \
        "'$d' is said to hold no exercise"
    if grep -q -e 'undefined reference' -e 'not \(compile\|build\)' \
        "$tmp/log"; then
        fail "'$d' gave a linker error"
    fi
done
has "$tmp/log" 'EXERCISES must be the folder' "the error says what to give"

# ---- a student's tree ---------------------------------------------------------
# Its exercises/ holds answers to 1.3 and 3.1 (3 points) and a 2.1 that does
# not compile, committed over the stubs. Its objects are this tree's,
# and it grades into this tree's build/ ($abs), where the objects of the
# exercise files that did not change since the last run are reused.
. tests/student_tree.sh
tree=$tmp/student abs=$PWD/$out
if ! student_tree "$tree" "$obj" > "$tmp/log" 2>&1; then
    # (not a git clone: the stubs are graded from this tree, and make stubs
    # says so when its exercises/ holds answers, whose stubs only git has)
    if git rev-parse --git-dir > /dev/null 2>&1; then
        cat "$tmp/log" >&2
        fail "could not make a student's tree in $tree"
    fi
    echo "grader tests: not a git clone: the stubs graded from here only"
    tree=.
fi

# ---- the stubs: 0 points, "not implemented" once per exercise ----------------
# (make stubs: those of tests/stubs.manifest, whatever exercises/ holds)
in_tree $make --no-print-directory stubs > "$tmp/log" 2>&1 \
    || { cat "$tmp/log" >&2; fail "make stubs exited with $?"; }
in_tree grade build/stubs "$abs-stubs" \
    || fail "grading the stubs exited with $?"
[ "$(total "$out-stubs/results.json")" = 0 ] \
    || fail "the stubs scored $(total "$out-stubs/results.json")"
n=$(grep -c 'not implemented' "$tmp/log")
[ "$n" = 46 ] || fail "'not implemented' said $n times, not once per exercise"
# the chapters show this table ("make check EXERCISES=exercises" in a
# fresh clone grades the stubs), and one exercise of it: as they are
sed "s#$abs-stubs/#build/grade/#" "$tmp/log" > "$tmp/log-stubs"
CK_RUN_CASE=ex1.2 in_tree grade build/stubs "$abs-stubs" \
    || fail "grading 1.2 of the stubs exited with $?"
sed "s#$abs-stubs/#build/grade/#" "$tmp/log" > "$tmp/log-one"
fits80 "$tmp/log-one" "CK_RUN_CASE=ex1.2 of the stubs"
shown_as() {   # shown_as COMMAND LOG: the chapters' listings of COMMAND
    local dir=$tmp/listings-$RANDOM n l
    n=$(listings_of "^$1\$" "$dir")
    [ "$n" -gt 0 ] || fail "no chapter shows '$1'"
    for l in "$dir"/*; do
        [ -f "$l" ] || continue
        listing_matches "$l" "$2" \
            || fail "a chapter's listing of '$1' is not the stubs' table"
    done
}
shown_as 'make check EXERCISES=exercises' "$tmp/log-stubs"
shown_as 'CK_RUN_CASE=ex1\.2 make check EXERCISES=exercises' "$tmp/log-one"

if [ "$tree" != . ]; then
    # ---- the student grades their exercises/ -----------------------------------
    # (make check EXERCISES=exercises, as the README says): the answers
    # pass, 2.1 alone does not compile, the other stubs are not implemented
    in_tree grade exercises "$abs-stubs" \
        || fail "grading the student's exercises/ exited with $?"
    cp "$tmp/log" "$tmp/log2"
    j=$out-stubs/results.json
    for want in 1.3=1 3.1=2 2.1=0 1.1=0; do
        s=$(out=$out-stubs score "${want%=*}")
        [ "$s" = "${want#*=}" ] \
            || fail "the student's ${want%=*} scored $s, not ${want#*=}"
    done
    [ "$(total "$j")" = 3 ] \
        || fail "the student's exercises/ scored $(total "$j"), not 3"
    has_below "$tmp/log2" '^2\.1 .* does not compile:$' \
        '^      ch2/ex2_1_softmax\.c:[0-9:]* error' \
        "the student's table shows 2.1's first error"
    fits80 "$tmp/log2" "the student's exercises/"
    n=$(grep -c '^[1-8]\.[1-9] .* does not compile' "$tmp/log2")
    [ "$n" = 1 ] || fail "$n rows do not compile in the student's table, not 1"
    n=$(grep -c '^[1-8]\.[1-9] .* not implemented$' "$tmp/log2")
    [ "$n" = 39 ] || fail "$n stubs not implemented in the student's table"

    # ---- one test case where no stub can stand in for the broken file ------
    # (no git history, and no copy of 2.1's stub from an earlier grading):
    # the build fails, says why once, and writes no results.json
    rm -f "$abs-stubs/stubs/ch2/ex2_1_softmax.c"
    echo "the last full grading" > "$j"
    GIT_DIR=$tmp/no-git CK_RUN_CASE=ex1.3 in_tree grade exercises \
        "$abs-stubs" || fail "CK_RUN_CASE=ex1.3 without a stub exited with $?"
    [ "$(cat "$j" 2>/dev/null)" = "the last full grading" ] \
        || fail "CK_RUN_CASE=ex1.3, not building, rewrote results.json"
    has "$tmp/log" 'CK_RUN_CASE=ex1.3 ran part of the tests' \
        "a partial run that does not build says so"
    n=$(grep -c '^ch2/ex2_1_softmax\.c:[0-9:]* error' "$tmp/log")
    [ "$n" = 1 ] || fail "the compiler's error was shown $n times, not once"
fi

if [ "$fails" != 0 ]; then
    echo "grader tests: $fails failed (logs: $out/)" >&2
    exit 1
fi
echo "grader tests: passed"
