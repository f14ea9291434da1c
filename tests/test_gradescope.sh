#!/usr/bin/env bash
# test_gradescope.sh OBJ - tests of `make gradescope` and `make grade-all`;
# run by `make check` after tests/test_grade.sh, with OBJ the build's
# object folder (build/cc).
#
# The zip is built in a student's tree (tests/student_tree.sh: its
# exercises/ holds answers and a file that does not compile) and must hold
# the stubs all the same. It is unpacked into a folder laid out as
# Gradescope lays out /autograder (source/ holds the zip's contents,
# run_autograder sits beside it, submission/ and results/), and
# run_autograder grades the stubs, solutions/ (at the top, and as files
# with no folders), a copy one folder down with a file that does not
# compile, a submission with no exercise file and a grading whose build
# fails. setup.sh is not run (no apt-get in tests): OBJ's objects are
# copied in instead, so only the exercise files compile. Then grade-all
# grades three students.
set -u
make=${MAKE:-make}
obj=${1:?usage: test_gradescope.sh OBJ (the build folder, build/cc)}
for v in CK_RUN_SUITE CK_RUN_CASE CK_INCLUDE_TAGS CK_EXCLUDE_TAGS; do
    if [ -n "${!v:-}" ]; then
        echo "gradescope tests: skipped ($v selects part of the tests)"
        exit 0
    fi
done
. tests/submission.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL gradescope test: $*" >&2; fails=$((fails + 1)); }
has() { grep -q -e "$2" "$1" || fail "$3 (no '$2' in $1)"; }
start=$SECONDS

# the points of every exercise, from tests/exercises.def: "1.1 3" ...
sed -n 's/^EXERCISE("\([^"]*\)", *[0-9]*, *\([0-9.]*\),.*/\1 \2/p' \
    tests/exercises.def > "$tmp/points"
max=$(awk '{ s += $2 } END { print s }' "$tmp/points")
points() { awk -v id="$1" '$1 == id { print $2 }' "$tmp/points"; }

# ---- the zip ----------------------------------------------------------------
# (its own zip: build/gradescope/autograder.zip is the instructor's), made
# in a student's tree when this is a git clone, else here
. tests/student_tree.sh
tree=$tmp/student
student_tree "$tree" "$obj" > "$tmp/log" 2>&1 || tree=.
zip=build/gradescope-test/autograder.zip
rm -f "$zip"
(cd "$tree" && $make --no-print-directory gradescope \
    GRADESCOPE_ZIP="$OLDPWD/$zip") > "$tmp/log" 2>&1 \
    || { cat "$tmp/log"; fail "make gradescope exited with $?"; }
unzip -Z1 "$zip" > "$tmp/list" 2>/dev/null || fail "no $zip, or not a zip"
for f in setup.sh run_autograder Makefile tests/grade.sh tests/submission.sh \
         exercises/ch1/ex1_1_vocab.c exercises/ch8/ex8_1_gelu.cu \
         data/tinyshakespeare.txt common/error.c; do
    grep -qx "$f" "$tmp/list" || fail "no $f in $zip"
done
if grep -q -e '^solutions/' -e '^build/' -e '^data/multi30k' \
        -e '\.o$' "$tmp/list"; then
    fail "$zip holds what it must not: $(grep -m 1 -e '^solutions/' \
          -e '^build/' -e '^data/multi30k' -e '\.o$' "$tmp/list")"
fi

root=$tmp/autograder
mkdir -p "$root/source"
unzip -q "$zip" -d "$root/source"
# its exercises/: the stubs of tests/stubs.manifest, not the answers
bash tests/stubs.sh --check "$root/source/exercises" 2> "$tmp/log" \
    || { cat "$tmp/log" >&2; fail "the zip's exercises/ are not the stubs"; }
cp "$root/source/run_autograder" "$root/"
[ -x "$root/run_autograder" ] || fail "run_autograder is not executable"
# the objects of this build but the exercises' (what setup.sh would build)
mkdir -p "$root/source/$(dirname "$obj")"
(cd "$(dirname "$obj")" && tar cf - --exclude="$(basename "$obj")/ex" \
    "$(basename "$obj")") | (cd "$root/source/$(dirname "$obj")" && tar xf -)

# autograde FLAGS: run_autograder on $root/submission, as Gradescope runs
# it; its output in $tmp/log, its results in $json
json=$root/results/results.json
autograde() {
    rm -rf "$root/results"
    (cd "$root" && AUTOGRADER_ROOT="$root" AUTOGRADER_MAKE_FLAGS="$1" \
        ./run_autograder > "$tmp/log" 2>&1)
    local rc=$?
    if [ "$rc" != 0 ]; then
        tail -n 20 "$tmp/log" >&2
        fail "run_autograder exited with $rc"
    fi
    if [ ! -f "$json" ]; then
        tail -n 20 "$tmp/log" >&2
        fail "run_autograder wrote no results.json (its output above)"
        return 1
    fi
    if grep -q -e "$tmp" -e "$PWD" "$json"; then
        fail "an absolute path in results.json: $(grep -o -m 1 -e "$tmp" \
              -e "$PWD" "$json")"
    fi
    if command -v python3 >/dev/null \
       && ! python3 -m json.tool "$json" > /dev/null 2>&1; then
        fail "results.json is not JSON: $(python3 -m json.tool "$json" 2>&1 \
              | tail -n 1)"
    fi
}
# submit DIR...: $root/submission holds copies of DIR... (by cp -R)
submit() {
    rm -rf "$root/submission"
    mkdir -p "$root/submission"
    [ $# = 0 ] || cp -R "$@" "$root/submission/"
}
total_is() {   # total_is SCORE MAX WHAT
    local s m
    s=$(results_score "$json")
    m=$(sed -n 's/^  "max_score": \([0-9.]*\),$/\1/p' "$json")
    [ "$s/$m" = "$1/$2" ] || fail "$3 scored $s / $m, not $1 / $2"
}

# The stubs (not this tree's exercises/, which may hold answers), as
# exercises/'s contents: 0 points of all
bash tests/stubs.sh "$tmp/stubs" || fail "tests/stubs.sh exited with $?"
submit "$tmp/stubs"/ch*
autograde NO_INSTALL=1 && total_is 0 "$max" "the stubs"
# solutions/, likewise: every point
submit solutions/ch*
autograde NO_INSTALL=1 && total_is "$max" "$max" "solutions/"
has "$json" '"output": "graded the chapter folders (ch1/ ...) at the top' \
    "the output says what was graded"
# the same files alone, as Gradescope's upload of files gives them
submit solutions/ch*/ex*
autograde NO_INSTALL=1 && total_is "$max" "$max" "solutions/'s files alone"
# one folder down (the exercises/ folder itself), with a file that does
# not compile and a stray folder beside it
submit "$tmp/stubs"
mv "$root/submission/stubs" "$root/submission/backup"
cp -R solutions "$root/submission/exercises"
echo 'int broken(void) { return 1 }' \
    >> "$root/submission/exercises/ch2/ex2_1_softmax.c"
if autograde NO_INSTALL=1; then
    total_is "$(awk -v m="$max" -v p="$(points 2.1)" 'BEGIN { print m - p }')" \
        "$max" "solutions/ one folder down, 2.1 broken,"
    s=$(results_score "$json" 2.1)
    [ "$s" = 0 ] || fail "2.1, which does not compile, scored $s"
    has "$json" '"number": "2.1", .*does not compile: 0 of .*'\
'ch2/ex2_1_softmax\.c:[0-9:]* error' "2.1's output has the compiler's message"
    note="graded the folder 'exercises/' of the submission (not: 'backup/'"
    has "$json" "$note" "the output says which folder was graded"
fi
# no exercise file at all: 0, and a message that says what to upload
submit README.md
autograde NO_INSTALL=1 && total_is 0 "$max" "a submission of README.md"
has "$json" '"output": "error: no exercise files in the submission:'\
' upload the folders ch1/ ' "the output says what to upload"
has "$json" 'the submission holds: README.md' "the output says what came"
# a build that fails (no such compiler): a results.json all the same
submit solutions/ch*
autograde "NO_INSTALL=1 CC=no-such-cc" && total_is 0 "$max" "a failed build"
has "$json" '"output": "The autograder could not grade this submission' \
    "a failed build says so"
grade_secs=$((SECONDS - start))

# ---- grade-all ---------------------------------------------------------------
subs=$tmp/submissions
mkdir -p "$subs/Ann Lee" "$subs/Bo, Jr." "$subs/Cy"
cp -R solutions "$subs/Ann Lee/exercises"          # as an LMS gives it
cp -R solutions/ch* "$subs/Bo, Jr./"
echo 'int broken(void) { return 1 }' >> "$subs/Bo, Jr./ch3/ex3_1_relu.c"
echo "my notes" > "$subs/Cy/notes.txt"
(cd "$subs" && find . -type f -exec cksum {} + | sort) > "$tmp/before"
out=build/grade-all-test
$make --no-print-directory grade-all DIR="$subs" GRADE_ALL_OUT="$out" \
    > "$tmp/log" 2>&1 || fail "make grade-all exited with $? ($tmp/log)"
(cd "$subs" && find . -type f -exec cksum {} + | sort) > "$tmp/after"
cmp -s "$tmp/before" "$tmp/after" || fail "make grade-all changed DIR"
# the rows it must write, from the points
row() {   # row NAME BROKEN-ID: the row of solutions/ with BROKEN-ID at 0
    local ids total
    total=$(awk -v b="$2" '$1 != b { s += $2 } END { print s }' "$tmp/points")
    ids=$(awk -v b="$2" '{ printf ",%s", $1 == b ? 0 : $2 }' "$tmp/points")
    echo "$1,$total,$max$ids,"
}
{
    echo "student,score,max_score$(awk '{ printf ",ex%s", $1 }' \
                                   "$tmp/points"),note"
    row "Ann Lee" none
    row '"Bo, Jr."' 3.1
    echo "Cy,0,$max$(awk '{ printf ",0" }' "$tmp/points"),\"no exercise" \
         "files in the submission: upload the folders ch1/ ... ch9/ of" \
         "exercises/ (ch1/ex1_1_vocab.c, ...), or the exercises/ folder" \
         "that holds them; the submission holds: notes.txt\""
} > "$tmp/want.csv"
if ! cmp -s "$tmp/want.csv" "$out/summary.csv"; then
    fail "$out/summary.csv is not as it should be:"
    diff "$tmp/want.csv" "$out/summary.csv" >&2
fi
for s in "Ann Lee" "Bo, Jr." Cy; do
    [ -f "$out/$s/results.json" ] || fail "no $out/$s/results.json"
done
has "$out/Bo, Jr./results.json" 'ch3/ex3_1_relu\.c:[0-9:]* error' \
    "Bo's results.json has the compiler's message"
# no DIR: one line, status 2
if $make --no-print-directory grade-all > "$tmp/log" 2>&1; then
    fail "make grade-all without DIR succeeded"
fi
has "$tmp/log" '^error: make grade-all needs DIR=FOLDER' \
    "make grade-all without DIR says what it needs"

if [ "$fails" != 0 ]; then
    echo "gradescope tests: $fails failed" >&2
    exit 1
fi
echo "gradescope tests: passed ($grade_secs s for the autograder's 6 runs," \
     "$((SECONDS - start)) s in all)"
