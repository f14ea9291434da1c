#!/usr/bin/env bash
# docs_sync_test.sh - the chapters' Markdown against the code, without
# pandoc (make check runs it first; about a second):
#   - docs/code_listings.sh: each listing's code and the link above it
#     are its region's as the source is now (make listings writes them);
#   - docs/exercise_tables.sh: each table of exercises names the tests
#     the grader runs, with their count and the points (make
#     exercise-tables writes them).
# First it proves on small made-up trees that each script writes what it
# should and fails, with one line naming the text and what differs, on
# each kind of drift; then it checks this repository's chapters.
#
#   bash tests/docs_sync_test.sh
# shellcheck disable=SC2016  # backquotes in Markdown, not commands
set -u
ROOT=$(pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
passed=0 failed=0
ok() { passed=$((passed + 1)); }
fail() { echo "FAIL: $*" >&2; failed=$((failed + 1)); }

# run WANT_STATUS TEXT SCRIPT ARGS...: the script, in the tree $R, exits
# with WANT_STATUS and (when TEXT is not empty) says TEXT on stderr
run() {
    local want=$1 text=$2 rc
    shift 2
    (cd "$R" && bash "$@") >"$TMP/out" 2>"$TMP/err"
    rc=$?
    if [ "$rc" != "$want" ]; then
        fail "$*: exit status $rc, expected $want"
        sed 's/^/    /' "$TMP/out" "$TMP/err" >&2
    elif [ -n "$text" ] && ! grep -qF -- "$text" "$TMP/err"; then
        fail "$*: no line with '$text':"
        sed 's/^/    /' "$TMP/err" >&2
    else
        ok
    fi
}
LISTINGS=$ROOT/docs/code_listings.sh
TABLES=$ROOT/docs/exercise_tables.sh

# ---- listings
R=$TMP/l
mkdir -p "$R/chapters/ch1_x" "$R/common"
md=$R/chapters/ch1_x/ch1.md
src() {   # the chapter's source, its region "r" at lines 4 to 6, $1 lower
    {
        printf 'int a;\n'
        for ((k = 0; k < ${1:-0}; k++)); do printf '\n'; done
        printf '%s\n' 'int f(void) {' '    //> r' '    int b = 1;' '' \
            '    return b;' '    //< r' '}'
    } >"$R/chapters/ch1_x/x.c"
}
src 0
printf '%s\n' '//> g' 'int g;' '//< g' >"$R/common/c.c"
printf '%s\n' '# One' '' 'Code:' '' \
    '```{.c include="chapters/ch1_x/x.c" region="r"}' '```' '' \
    '* in a list:' '' '  ```{.c include="common/c.c" region="g"}' \
    '  ```' '' 'Output:' '' '```text' '$ ./ch1 --x' 'out' '```' '' \
    '~~~' '```{.c include="nowhere.c" region="z"}' '~~~' '' 'End.' >"$md"
cp "$md" "$TMP/before"
run 1 "chapters/ch1_x/ch1.md:5: the listing of chapters/ch1_x/x.c region 'r': no link to its lines above it; it is empty; run make listings" \
    "$LISTINGS"
cmp -s "$md" "$TMP/before" || fail "code_listings.sh without --write changed the text"
run 0 "" "$LISTINGS" --write
printf '%s\n' '# One' '' 'Code:' '' \
    '[`chapters/ch1_x/x.c`, lines 4–6](x.c#L4-L6) · region `r`' '' \
    '```{.c include="chapters/ch1_x/x.c" region="r"}' 'int b = 1;' '' \
    'return b;' '```' '' '* in a list:' '' \
    '  [`common/c.c`, line 2](../../common/c.c#L2) · region `g`' '' \
    '  ```{.c include="common/c.c" region="g"}' '  int g;' '  ```' '' \
    'Output:' '' '```text' '$ ./ch1 --x' 'out' '```' '' '~~~' \
    '```{.c include="nowhere.c" region="z"}' '~~~' '' 'End.' \
    >"$TMP/want"
if cmp -s "$md" "$TMP/want"; then ok; else
    fail "code_listings.sh --write wrote another text:"
    diff "$TMP/want" "$md" | sed 's/^/    /' >&2
fi
run 0 "" "$LISTINGS"
cp "$md" "$TMP/written"
touch -d '2000-01-01' "$md"
run 0 "" "$LISTINGS" --write
if cmp -s "$md" "$TMP/written" && [ "$(stat -c %Y "$md")" = 946684800 ]; then
    ok
else
    fail "code_listings.sh --write changed a text that was up to date"
fi
# the output listings of tests/listings.sh are still found
helpers=$ROOT/tests/listings.sh
n=$(cd "$R" && ROOT=$R bash -c '. "$1"; listings_of "^\./ch1" "$2"' _ \
     "$helpers" "$TMP/ol")
if [ "$n" = 1 ] && [ "$(cat "$TMP/ol/1")" = "$(printf '$ ./ch1 --x\nout')" ]
then ok; else fail "tests/listings.sh finds $n output listings, not the one"; fi
# drift: the code changed, lines moved, the link edited by hand
sed -i 's/int b = 1;/int b = 2;/' "$R/chapters/ch1_x/x.c"
run 1 "ch1.md:7: the listing of chapters/ch1_x/x.c region 'r': its line 1 differs from the source's line 4; run make listings" \
    "$LISTINGS"
src 2
run 1 "its link reads lines 4–6, the region is lines 6–8 now" "$LISTINGS"
src 0
sed -i 's/lines 4–6](x.c#L4-L6)/lines 4–6](x.c#L4-L7)/' "$md"
run 1 "its link should read [\`chapters/ch1_x/x.c\`, lines 4–6](x.c#L4-L6)" \
    "$LISTINGS"
run 0 "" "$LISTINGS" --write
run 0 "" "$LISTINGS"
printf '%s\n' 'int f(void) {' '    //> r' '    return 0;' '    //> r' \
    '    //< r' '}' >"$R/chapters/ch1_x/x.c"
run 1 "region 'r' is opened twice" "$LISTINGS"
printf '%s\n' 'int f(void);' >"$R/chapters/ch1_x/x.c"
cp "$md" "$TMP/before"
run 1 "no region 'r' in chapters/ch1_x/x.c" "$LISTINGS" --write
cmp -s "$md" "$TMP/before" || fail "code_listings.sh --write changed a text with errors"

# ---- tables of exercises
R=$TMP/t
mkdir -p "$R/tests/ch1" "$R/exercises/ch1" "$R/chapters/ch1_x"
md=$R/chapters/ch1_x/ch1.md
printf '%s\n' '// the exercises' \
    'EXERCISE("1.1", 1, 3, "vocabulary, encode and decode", ex1_1_tcase)' \
    'EXERCISE("1.2", 1, 2, "get_batch", ex1_2_tcase)' \
    >"$R/tests/exercises.def"
suite() {   # the suite, with exercise 1.2's tests named $@
    {
        printf '%s\n' 'START_TEST(ex1_1_small_vocab) {' '}' 'END_TEST' \
            'TCase *ex1_1_tcase(void) {' \
            '    TCase *tc = tcase_create("ex1.1");' \
            '    tcase_add_test(tc, ex1_1_small_vocab);' \
            '    tcase_add_test(tc, ex1_1_round_trip);' \
            '    return tc;' '}' '' 'TCase *ex1_2_tcase(void) {' \
            '    TCase *tc = tcase_create("ex1.2");'
        for t in "$@"; do printf '    tcase_add_test(tc, %s);\n' "$t"; done
        printf '%s\n' '    return tc;' '}'
    } >"$R/tests/ch1/test_ex1.c"
}
suite ex1_2_matches_the_rng ex1_2_single_window
touch "$R/exercises/ch1/ex1_1_vocab.c" "$R/exercises/ch1/ex1_2_batch.c"
printf '%s\n' '# One' '' '| exercise | points | file to edit | TCase |' \
    '|---|---|---|---|' '| 1.1 old | 3 | `x` | `ex1.1` |' '' 'After.' >"$md"
run 1 "ch1.md:5: exercise 1.1: a row of 4 columns, not 5" "$TABLES"
run 1 "exercise 1.2 has no row in the table" "$TABLES"
run 0 "" "$TABLES" --write
printf '%s\n' '# One' '' \
    '| exercise | points | file to edit | TCase | tests, as the grader names them |' \
    '|---|---|---|---|---|' \
    '| 1.1 vocabulary, encode and decode | 3 | `exercises/ch1/ex1_1_vocab.c` | `ex1.1` | 2: `small vocab`, `round trip` |' \
    '| 1.2 get_batch | 2 | `exercises/ch1/ex1_2_batch.c` | `ex1.2` | 2: `matches the rng`, `single window` |' \
    '' 'After.' >"$TMP/want"
if cmp -s "$md" "$TMP/want"; then ok; else
    fail "exercise_tables.sh --write wrote another text:"
    diff "$TMP/want" "$md" | sed 's/^/    /' >&2
fi
run 0 "" "$TABLES"
# drift: a test added to the suite, one renamed, the points changed
suite ex1_2_matches_the_rng ex1_2_single_window ex1_2_last_window
run 1 "ch1.md:6: exercise 1.2: it lists 2 tests, the grader runs 3; not listed: \`last window\`" \
    "$TABLES"
suite ex1_2_matches_the_rng ex1_2_one_window
run 1 "the grader has none named \`single window\`" "$TABLES"
suite ex1_2_matches_the_rng ex1_2_single_window
sed -i 's/"get_batch", ex1_2/"get_batch", ex1_2/; s/1, 2, "get_batch"/1, 4, "get_batch"/' \
    "$R/tests/exercises.def"
run 1 "exercise 1.2: 2 points here, 4 in tests/exercises.def" "$TABLES"
run 1 "exercise_tables.sh: 1 table(s) of exercises differ from what the grader runs: run make exercise-tables" \
    "$TABLES"

# ---- this repository
R=$ROOT
run 0 "" "$LISTINGS"
run 0 "" "$TABLES"

echo "docs_sync_test: $passed passed, $failed failed"
[ $failed = 0 ]
