# submission.sh - sourced (not run) by tests/gradescope/run_autograder and
# tests/grade_all.sh, from the repository root: what a submission holds,
# and a results.json for one that cannot be graded.
#
#   stage_submission SUB DEST   copy SUB's exercise files into DEST, laid
#                               out as exercises/ is; SUBMISSION_NOTE says
#                               what was found. Status 2 and one line on
#                               stderr when SUB holds no exercise file.
#   write_zero_results FILE MSG a results.json in which every exercise
#                               scores 0 and MSG is the output
#   add_note FILE NOTE          NOTE at the top of FILE's "output"
#   results_score FILE [ID]     FILE's total score, or exercise ID's

# the number of exN_M_*.c (and .cu) files in DIR/chN/
count_exercises() {
    local n=0 f
    for f in "$1"/ch[0-9]*/ex[0-9]*_[0-9]*_*.c \
             "$1"/ch[0-9]*/ex[0-9]*_[0-9]*_*.cu; do
        [ -f "$f" ] && n=$((n + 1))
    done
    echo "$n"
}

# the last chapter folder of exercises/ ("ch8"), for the messages
last_chapter() {
    local d last=ch1
    for d in exercises/ch[0-9]*/; do
        d=${d%/}
        d=${d##*/}
        [ "${d#ch}" -gt "${last#ch}" ] 2>/dev/null && last=$d
    done
    echo "$last"
}

# Students upload one of three things, and each is accepted:
#   - the contents of exercises/: ch1/ ... ch9/ at the top;
#   - a folder holding them, one level down (exercises/ch1/..., or
#     "My work/ch1/..."); exercises/ is taken first, then the folder with
#     the most exercise files;
#   - the files alone, with no folders (what Gradescope's upload of single
#     files gives): each goes into the chapter its name says (ex3_1_* is
#     chapter 3's).
stage_submission() {
    local sub=${1%/} dest=$2 from='' n best=0 d others='' f ch
    SUBMISSION_NOTE=''
    [ -n "$sub" ] || sub=/
    rm -rf "$dest"
    mkdir -p "$dest" || return 2
    if [ "$(count_exercises "$sub")" -gt 0 ]; then
        from=$sub
        SUBMISSION_NOTE="graded the chapter folders (ch1/ ...) at the top of"
        SUBMISSION_NOTE+=" the submission"
    else
        # exercises/ first, else the folder with the most exercise files
        for d in "$sub"/*/; do
            d=${d%/}
            n=$(count_exercises "$d")
            [ "$n" -gt 0 ] || continue
            if [ "${d##*/}" = exercises ]; then n=999999; fi
            if [ "$n" -gt "$best" ]; then
                [ -n "$from" ] && others+=" '${from#"$sub/"}/'"
                from=$d best=$n
            else
                others+=" '${d#"$sub/"}/'"
            fi
        done
        if [ -n "$from" ]; then
            SUBMISSION_NOTE="graded the folder '${from#"$sub/"}/' of the"
            SUBMISSION_NOTE+=" submission"
            [ -n "$others" ] && SUBMISSION_NOTE+=" (not:$others, which also"
            [ -n "$others" ] && SUBMISSION_NOTE+=" hold exercise files)"
        fi
    fi
    if [ -n "$from" ]; then
        for d in "$from"/ch[0-9]*/; do
            cp -R "${d%/}" "$dest/" || return 2
        done
        return 0
    fi
    # the files alone
    n=0
    for f in "$sub"/ex[0-9]*_[0-9]*_*.c "$sub"/ex[0-9]*_[0-9]*_*.cu; do
        [ -f "$f" ] || continue
        ch=${f##*/ex}
        ch=ch${ch%%_*}
        mkdir -p "$dest/$ch" && cp "$f" "$dest/$ch/" || return 2
        n=$((n + 1))
    done
    if [ "$n" -gt 0 ]; then
        SUBMISSION_NOTE="graded the exercise files at the top of the"
        SUBMISSION_NOTE+=" submission, each in its chapter"
        return 0
    fi
    local names=() seen
    mapfile -t names < <(cd "$sub" 2>/dev/null \
        && find . -mindepth 1 -maxdepth 1 -printf '%P\n' | sort | head -n 8)
    seen=$(printf '%s, ' "${names[@]}")
    seen=${seen%, }
    echo "error: no exercise files in the submission: upload the folders" \
         "ch1/ ... $(last_chapter)/ of exercises/ (ch1/ex1_1_vocab.c, ...)," \
         "or the exercises/ folder that holds them; the submission holds:" \
         "${seen:-nothing}" >&2
    return 2
}

# json_string TEXT: TEXT as a JSON string (control characters dropped)
json_string() {
    local s=$1
    s=${s//\\/\\\\}
    s=${s//\"/\\\"}
    s=${s//$'\t'/\\t}
    s=${s//$'\n'/\\n}
    printf '"%s"' "$(printf '%s' "$s" | LC_ALL=C tr -d '\001-\037\177')"
}

write_zero_results() {
    local file=$1 msg=$2 id pts title max=0 tests='' sep=''
    while IFS=$'\t' read -r id pts title; do
        tests+="$sep    {\"name\": $(json_string "Exercise $id: $title"),"
        tests+=" \"number\": \"$id\", \"score\": 0, \"max_score\": $pts,"
        tests+=" \"status\": \"failed\", \"output\": \"not graded (see the"
        tests+=" message at the top)\"}"
        sep=$',\n'
        max=$(awk -v a="$max" -v b="$pts" 'BEGIN { print a + b }')
    done < <(sed -n \
        -e 's/^EXERCISE("\([^"]*\)", *[0-9]*, *\([0-9.]*\),/\1\t\2\t/' \
        -e 's/\t *"\([^"]*\)".*/\t\1/p' tests/exercises.def)
    mkdir -p "$(dirname "$file")"
    printf '{\n  "score": 0,\n  "max_score": %s,\n  "output": %s,\n' \
        "$max" "$(json_string "$msg")" > "$file.tmp"
    printf '  "tests": [\n%s\n  ]\n}\n' "$tests" >> "$file.tmp"
    mv "$file.tmp" "$file"
}

# The results.json of tests/grade.c has "score" and "max_score" on lines 2
# and 3, then "output" on line 4 when it has one.
add_note() {
    NOTE=$(json_string "$2") awk '
        NR == 4 && sub(/^  "output": "/, "") {
            n = ENVIRON["NOTE"]
            print "  \"output\": " substr(n, 1, length(n) - 1) "\\n\\n" $0
            next
        }
        NR == 4 { print "  \"output\": " ENVIRON["NOTE"] "," }
        { print }' "$1" > "$1.tmp" && mv "$1.tmp" "$1"
}

results_score() {
    if [ $# = 1 ]; then
        sed -n 's/^  "score": \([0-9.]*\),$/\1/p' "$1"
    else
        sed -n "s/.*\"number\": \"$2\", \"score\": \([0-9.]*\),.*/\1/p" "$1"
    fi
}
