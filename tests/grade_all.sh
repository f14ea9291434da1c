#!/usr/bin/env bash
# grade_all.sh DIR OUT - what `make grade-all DIR=...` runs, from the
# repository root: grades every student's folder under DIR (one a student,
# named as the student; any name, spaces included) as `make check
# EXERCISES=...` does, and writes OUT/<student>/results.json, OUT/
# <student>/report.txt (the grade table and the compiler's messages) and
# OUT/summary.csv: one row a student (student, score, max_score, one column
# an exercise, and a note), a folder that does not build or holds no
# exercise file included. A student's folder may hold the chapter folders
# (ch1/ ...) or a folder that holds them (exercises/, as an LMS gives it).
# DIR is only read. Every student is graded in the same work folder,
# OUT/.work, whose objects of unchanged files are reused.
#     MAKE=make GRADER=build/.../grade_nocode bash tests/grade_all.sh DIR OUT
set -u
dir=${1%/} out=${2:?usage: grade_all.sh DIR OUT}
[ -n "$dir" ] || dir=/
if [ ! -d "$dir" ]; then
    echo "error: DIR=$1 is not a folder (make grade-all DIR=FOLDER, one" \
         "folder a student inside)" >&2
    exit 2
fi
for v in CK_RUN_SUITE CK_RUN_CASE CK_INCLUDE_TAGS CK_EXCLUDE_TAGS; do
    if [ -n "${!v:-}" ]; then
        echo "error: $v selects part of the tests, and a part is no grade:" \
             "run make grade-all without it" >&2
        exit 2
    fi
done
. tests/submission.sh

students=()
for d in "$dir"/*/; do
    d=${d%/}
    [ -d "$d" ] || continue
    case ${d##*/} in __MACOSX) continue ;; esac
    students+=("${d##*/}")
done
if [ ${#students[@]} = 0 ]; then
    echo "error: no folder in $dir: make grade-all DIR=FOLDER wants one" \
         "folder a student inside FOLDER" >&2
    exit 2
fi

# Nothing of an earlier run stays (a student since removed from DIR),
# but the work folder, whose objects are reused.
mkdir -p "$out"
find "$out" -mindepth 1 -maxdepth 1 ! -name .work -exec rm -rf {} +
work=$out/.work

# csv FIELD...: one row, each field quoted when it must be
csv() {
    local f sep='' row=''
    for f in "$@"; do
        case $f in
            *[,\"]* | *$'\n'*) f=\"${f//\"/\"\"}\" ;;
        esac
        row+=$sep$f
        sep=,
    done
    printf '%s\n' "$row"
}
mapfile -t ids < <(sed -n 's/^EXERCISE("\([^"]*\)".*/\1/p' tests/exercises.def)
csv student score max_score "${ids[@]/#/ex}" note > "$out/summary.csv.tmp"

n=0
for s in "${students[@]}"; do
    n=$((n + 1))
    res=$out/$s
    mkdir -p "$res"
    printf '[%d/%d] %s: ' "$n" "${#students[@]}" "$s"
    note=''
    if ! stage_submission "$dir/$s" "$work/submission" 2> "$res/report.txt"
    then
        note=$(sed 's/^error: //' "$res/report.txt")
        write_zero_results "$res/results.json" "$(cat "$res/report.txt")"
    else
        echo "$SUBMISSION_NOTE" > "$res/report.txt"
        rm -f "$work/grade/results.json"
        MAKE=${MAKE:-make} GRADER=${GRADER:?} bash tests/grade.sh \
            "$work/submission" "$work/grade" >> "$res/report.txt" 2>&1
        if [ -f "$work/grade/results.json" ]; then
            cp "$work/grade/results.json" "$res/results.json"
            add_note "$res/results.json" "$SUBMISSION_NOTE."
            grep -q 'the exercise folder does not build' "$res/results.json" \
                && note="the exercises do not build, even with the stubs"
        else
            note="grading failed (see report.txt)"
            write_zero_results "$res/results.json" \
                "grading failed: $(tail -n 5 "$res/report.txt")"
        fi
    fi
    score=$(results_score "$res/results.json")
    max=$(sed -n 's/^  "max_score": \([0-9.]*\),$/\1/p' "$res/results.json")
    row=("$s" "$score" "$max")
    for id in "${ids[@]}"; do
        row+=("$(results_score "$res/results.json" "$id")")
    done
    csv "${row[@]}" "$note" >> "$out/summary.csv.tmp"
    echo "$score / $max${note:+ ($note)}"
done
mv "$out/summary.csv.tmp" "$out/summary.csv"
echo "graded ${#students[@]} students: $out/summary.csv," \
     "$out/<student>/results.json and report.txt"
