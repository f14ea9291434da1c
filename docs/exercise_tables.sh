#!/usr/bin/env bash
# docs/exercise_tables.sh -- each chapter's table of exercises, made from
# what the grader runs.
#
# Usage (from the repository root):
#   bash docs/exercise_tables.sh            check (make check, docs/build.sh)
#   bash docs/exercise_tables.sh --write    rewrite them (make exercise-tables)
#
# Each chapter with exercises has one table whose header starts
# "| exercise | points |". Its rows come from:
#   - tests/exercises.def: the exercise, its title and points, its TCase
#     ("ex" and the id) and the function that makes it;
#   - that function in tests/chN/*.c: the tests it adds
#     (tcase_add_test(tc, exN_M_name) and the other tcase_add_*test*),
#     named as the grader names them in its report (tests/run_tests.c,
#     test_intent: "exN_M_" dropped, '_' as ' ');
#   - exercises/chN/: the one file exN_M_*.c (or .cu) to edit.
# --write replaces each table by what these give, leaving the rest of the
# text alone; without --write, each row that differs (and a chapter
# without its table) is one line on stderr, and the status is 1.
set -euo pipefail

WRITE=0
if [[ ${1:-} == --write ]]; then WRITE=1; shift; fi
if (($#)); then
  echo "usage: bash docs/exercise_tables.sh [--write]" >&2
  exit 2
fi
cd "${DOCS_ROOT:-.}"
[[ -f tests/exercises.def ]] || exit 0   # a tree without exercises
shopt -s nullglob
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# The tables as they should be: $TMP/N.md for chapter N.
SUITES=(tests/ch*/*.c)
EXFILES=(exercises/ch*/ex*_*_*.c exercises/ch*/ex*_*_*.cu)
printf '%s\n' "${EXFILES[@]}" >"$TMP/exfiles"
awk -v tmp="$TMP" -v exfiles="$TMP/exfiles" '
  function fail(msg) { print "exercise_tables.sh: " msg > "/dev/stderr"; bad = 1 }
  # tests/run_tests.c test_intent: "ex6_2_pure_decay" -> "pure decay"
  # (step by step as there: digits, an optional "_", digits, then "_")
  function intent(name,   s, q) {
    s = name
    if (substr(s, 1, 2) == "ex") {
      q = 3
      while (substr(s, q, 1) ~ /[0-9]/) q++
      if (substr(s, q, 1) == "_") q++
      while (substr(s, q, 1) ~ /[0-9]/) q++
      if (substr(s, q, 1) == "_") s = substr(s, q + 1)
    }
    gsub(/_/, " ", s)
    return s
  }
  BEGIN { while ((getline f < exfiles) > 0) if (f != "") file_list[++nf] = f }
  FILENAME == "tests/exercises.def" {
    if ($0 !~ /^EXERCISE\(/) next
    line = $0
    if (!match(line, /^EXERCISE\("[^"]*", *[0-9]+, *[0-9.]+, *"/)) {
      fail("tests/exercises.def:" FNR ": cannot read this line"); next
    }
    head = substr(line, 1, RLENGTH); rest = substr(line, RLENGTH + 1)
    n++
    split(head, h, /"/); id[n] = h[2]
    sub(/^[^,]*, */, "", head); ch[n] = head + 0
    sub(/^[^,]*, */, "", head); pts[n] = head + 0
    if (!match(rest, /", *[A-Za-z0-9_]+\) *$/)) {
      fail("tests/exercises.def:" FNR ": cannot read this line"); next
    }
    title[n] = substr(rest, 1, RSTART - 1)
    fn[n] = substr(rest, RSTART, RLENGTH)
    sub(/^", */, "", fn[n]); sub(/\).*$/, "", fn[n])
    next
  }
  # a suite: the tests each TCase function adds
  /^TCase \*[A-Za-z0-9_]+\(void\) *\{/ {
    cur = $0; sub(/^TCase \*/, "", cur); sub(/\(.*/, "", cur)
    where[cur] = FILENAME ":" FNR; ntests[cur] = 0
    next
  }
  cur != "" && /^\}/ { cur = ""; next }
  cur != "" && /tcase_add_[a-z_]*test/ {
    t = $0
    if (!match(t, /tcase_add_[a-z_]*test[a-z_]*\( *[A-Za-z0-9_]+ *, *[A-Za-z0-9_]+/)) {
      fail(FILENAME ":" FNR ": cannot read the test this line adds"); next
    }
    t = substr(t, RSTART, RLENGTH); sub(/.*, */, "", t)
    tests[cur, ++ntests[cur]] = t
  }
  END {
    for (i = 1; i <= n; i++) {
      if (!(fn[i] in ntests)) {
        fail("tests/exercises.def: exercise " id[i] ": no function TCase *" \
             fn[i] "(void) in tests/ch*/*.c"); continue
      }
      if (ntests[fn[i]] == 0) fail(where[fn[i]] ": " fn[i] " adds no test")
      # the file to edit: exercises/chN/exN_M_*.c or .cu, exactly one
      pre = "exercises/ch" ch[i] "/ex" id[i]; sub(/\./, "_", pre); pre = pre "_"
      file = ""
      for (k = 1; k <= nf; k++)
        if (index(file_list[k], pre) == 1) {
          if (file != "") fail("exercise " id[i] ": two files, " file " and " file_list[k])
          file = file_list[k]
        }
      if (file == "") { fail("exercise " id[i] ": no file " pre "*.c in exercises/"); continue }
      names = ""
      for (k = 1; k <= ntests[fn[i]]; k++)
        names = names (k > 1 ? ", " : "") "`" intent(tests[fn[i], k]) "`"
      out = tmp "/" ch[i] ".md"
      if (!(ch[i] in started)) {
        started[ch[i]] = 1
        print "| exercise | points | file to edit | TCase | tests, as the grader names them |" > out
        print "|---|---|---|---|---|" > out
      }
      printf "| %s %s | %s | `%s` | `ex%s` | %d: %s |\n", id[i], title[i],
             pts[i], file, id[i], ntests[fn[i]], names > out
    }
    exit bad
  }' tests/exercises.def "${SUITES[@]}"

status=0 stale=0
for want in "$TMP"/*.md; do
  n=$(basename "$want" .md)
  found=(chapters/ch"$n"_*/ch"$n".md)
  if ((${#found[@]} != 1)); then
    echo "exercise_tables.sh: chapter $n has exercises but no chapters/ch${n}_*/ch$n.md" >&2
    status=1; continue
  fi
  md=${found[0]}
  set +e
  awk -v want="$want" -v md="$md" -v write="$WRITE" -v out="$TMP/new" '
    BEGIN { while ((getline l < want) > 0) W[++nw] = l }
    function trim(x) { sub(/^ +/, "", x); sub(/ +$/, "", x); return x }
    # the names in a cell of tests: its `code` spans, in L[1..]; returns
    # how many
    function names(cell, L,   n) {
      n = 0
      while (match(cell, /`[^`]*`/)) {
        L[++n] = substr(cell, RSTART + 1, RLENGTH - 2)
        cell = substr(cell, RSTART + RLENGTH)
      }
      return n
    }
    # what differs between a row and the row the grader makes
    function differ(row, good,   a, b, na, nb, r, i, j, x, y, nx, ny, miss, more) {
      na = split(row, a, "|"); nb = split(good, b, "|")
      if (na != nb) return "a row of " na - 2 " columns, not " nb - 2 "; it should read: " good
      r = ""
      if (trim(a[2]) != trim(b[2]))
        r = r "; its title should read \047" trim(b[2]) "\047"
      if (trim(a[3]) != trim(b[3]))
        r = r "; " trim(a[3]) " points here, " trim(b[3]) " in tests/exercises.def"
      if (trim(a[4]) != trim(b[4])) r = r "; the file to edit is " trim(b[4])
      if (trim(a[5]) != trim(b[5])) r = r "; its TCase is " trim(b[5])
      if (trim(a[6]) != trim(b[6])) {
        nx = names(a[6], x); ny = names(b[6], y)
        miss = more = ""
        for (j = 1; j <= ny; j++) {
          for (i = 1; i <= nx && x[i] != y[j]; i++) ;
          if (i > nx) miss = miss (miss == "" ? "" : ", ") "`" y[j] "`"
        }
        for (i = 1; i <= nx; i++) {
          for (j = 1; j <= ny && x[i] != y[j]; j++) ;
          if (j > ny) more = more (more == "" ? "" : ", ") "`" x[i] "`"
        }
        r = r "; it lists " nx " test" (nx == 1 ? "" : "s") ", the grader runs " ny
        if (miss != "") r = r "; not listed: " miss
        if (more != "") r = r "; the grader has none named " more
        if (miss == "" && more == "" && nx == ny) r = r " (in another order, or another count)"
      }
      return substr(r, 3)
    }
    { T[NR] = $0 }
    END {
      for (i = 1; i <= NR; i++) if (T[i] ~ /^\| *exercise *\| *points *\|/) {
        if (at) { print md ":" i ": a second table of exercises" > "/dev/stderr"; exit 1 }
        at = i
      }
      if (!at) {
        print md ": no table of exercises (a line \"| exercise | points | ...\"): run make exercise-tables after adding one" > "/dev/stderr"
        exit 1
      }
      for (e = at; e + 1 <= NR && T[e + 1] ~ /^\|/; e++) ;
      # row by row, by the exercise each names
      for (i = at + 2; i <= e; i++) {
        k = T[i]; sub(/^\| */, "", k); sub(/ .*/, "", k); have[k] = i
      }
      for (j = 3; j <= nw; j++) {
        k = W[j]; sub(/^\| */, "", k); sub(/ .*/, "", k); wanted[k] = 1
        if (!(k in have))
          msg = msg md ":" at ": exercise " k " has no row in the table\n"
        else if (T[have[k]] != W[j])
          msg = msg md ":" have[k] ": exercise " k ": " differ(T[have[k]], W[j]) "\n"
      }
      for (k in have) if (!(k in wanted))
        msg = msg md ":" have[k] ": exercise " k " is not graded (tests/exercises.def)\n"
      if (T[at] != W[1] || T[at + 1] != W[2])
        msg = msg md ":" at ": the header should read " W[1] "\n"
      if (msg != "" && !write) printf "%s", msg > "/dev/stderr"
      if (write) {
        for (i = 1; i < at; i++) print T[i] > out
        for (j = 1; j <= nw; j++) print W[j] > out
        for (i = e + 1; i <= NR; i++) print T[i] > out
      }
      exit msg != "" ? 3 : 0
    }' "$md"
  rc=$?
  set -e
  case $rc in
  0) ;;
  3) stale=$((stale + 1))
     if ((WRITE)); then
       cat "$TMP/new" >"$md"
       echo "exercise_tables.sh: rewrote the table of $md"
     fi ;;
  *) status=1 ;;
  esac
  rm -f "$TMP/new"
done
((status == 0)) || exit 1
if ((stale && !WRITE)); then
  echo "exercise_tables.sh: $stale table(s) of exercises differ from what the grader runs: run make exercise-tables" >&2
  exit 1
fi
