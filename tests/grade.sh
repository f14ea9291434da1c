#!/usr/bin/env bash
# grade.sh - what `make check EXERCISES=DIR` runs for any folder but
# solutions/:   MAKE=make GRADER=grade_nocode bash tests/grade.sh DIR OUT
#
# The student's files are copied into OUT/src under the names of the stubs
# (so a path with spaces, which make cannot handle, never reaches make),
# and each is compiled on its own. A file that is absent or does not
# compile is replaced by its stub: that exercise scores 0 and says why
# (OUT/notes/ID.missing or ID.nobuild, read by the runner), and the others
# are graded. The stubs are those of tests/stubs.manifest, copied into
# OUT/stubs by tests/stubs.sh, never the files of exercises/, which may
# be a student's, DIR itself included. Writes OUT/results.json; the exit
# status is 0 whenever it was written, 2 when DIR holds no exercise at all.
set -u
dir=${1%/} out=$2
make=${MAKE:-make}
stage=$out/src notes=$out/notes log=$out/build.log stubdir=$out/stubs
[ -n "$dir" ] || dir=/

# No report of an earlier grading may outlive this one (a partial run,
# CK_RUN_CASE=..., writes none and keeps the last full one).
if [ -z "${CK_RUN_SUITE:-}${CK_RUN_CASE:-}${CK_INCLUDE_TAGS:-}" ] \
       && [ -z "${CK_EXCLUDE_TAGS:-}" ]; then
    rm -f "$out/results.json"
fi
if [ ! -d "$dir" ]; then
    echo "error: EXERCISES=$dir is not a folder" >&2
    exit 2
fi

# The exercises are the stubs': chN/exN_M_name.c, or .cu (the GPU kernels
# of chapter 8, built under the emulation), as rel(ative) paths
mapfile -t rels < <(bash tests/stubs.sh --list \
                    | grep '^ch[0-9]*/ex[0-9]*_[0-9]*_.*\.cu*$')
if [ ${#rels[@]} = 0 ]; then
    echo "error: tests/stubs.manifest lists no exercise" >&2
    exit 2
fi
# The stubs themselves, into OUT/stubs: a stub that cannot be had (its
# file in exercises/ changed, and no git history) is needed only if that
# exercise does not build, and said then.
bash tests/stubs.sh "$stubdir" 2> /dev/null
# ch1/ex1_2_batch.c -> 1.2
ex_id() { sed 's/^ch[0-9]*\/ex\([0-9]*\)_\([0-9]*\)_.*/\1.\2/' <<< "$1"; }
# the student's file for exercise $1 (ch1/ex1_2_batch.c): same name first,
# else any exN_M_*.c (exN_M_*.cu for a .cu stub)
student_file() {
    local ch=${1%/*} base=${1##*/} prefix m
    prefix=$(sed 's/^\(ex[0-9]*_[0-9]*_\).*/\1/' <<< "$base")
    [ -f "$dir/$ch/$base" ] && { echo "$dir/$ch/$base"; return; }
    for m in "$dir/$ch/$prefix"*."${base##*.}"; do
        [ -f "$m" ] && { echo "$m"; return; }
    done
}
# standin REL: its stub in the student's file's place; status 1, and a
# note, when there is none (the student's file then stays, and the build
# fails on it)
standin() {
    if [ -f "$stubdir/$1" ]; then
        cp "$stubdir/$1" "$stage/$1"
    else
        echo "note: $1 has no stub to stand in (no git history)" >&2
        return 1
    fi
}

found=0
for rel in "${rels[@]}"; do
    [ -n "$(student_file "$rel")" ] && found=$((found + 1))
done
if [ "$found" = 0 ]; then
    hint=$(find "$dir" -mindepth 2 -maxdepth 4 -path '*/ch1/ex1_1_*.c' \
           2>/dev/null | sort | head -n 1)
    [ -n "$hint" ] && hint="; try EXERCISES='${hint%/ch1/*}'"
    last=$(printf '%s\n' "${rels[@]}" | cut -d / -f 1 | sort -u -V \
           | tail -n 1)
    echo "error: no ch1/ex1_1_*.c under $dir (nor any other exercise" \
         "file): EXERCISES must be the folder that holds ch1/ ... $last/," \
         "laid out like exercises/ (DIR/ch1/ex1_1_vocab.c, ...)$hint" >&2
    exit 2
fi

# what the compiler and linker say, without this machine's paths
clean_log() {   # clean_log TEXT -> stdout
    local t=$1
    t=${t//"$PWD/"/}
    t=${t//"$stage/"/}
    [ -n "${exobj:-}" ] && t=${t//"$exobj/"/}
    printf '%s\n' "$t" | grep -v -e '^  CC ' -e '^make' \
        | sed -e 's#^[^ :]*/\(ld\|collect2\)[^ :/]*:#\1:#'
}

rm -rf "$notes" "$log"
mkdir -p "$notes"
declare -A shown     # rel -> the student's file as the messages name it
for rel in "${rels[@]}"; do
    id=$(ex_id "$rel")
    mkdir -p "$stage/${rel%/*}"
    f=$(student_file "$rel")
    if [ -z "$f" ]; then
        printf 'no %s*.%s in the folder (graded as the stub: 0 points)\n' \
            "$(sed 's/^\(ch[0-9]*\/ex[0-9]*_[0-9]*_\).*/\1/' <<< "$rel")" \
            "${rel##*.}" \
            > "$notes/$id.missing"
        cmp -s "$stubdir/$rel" "$stage/$rel" \
            || standin "$rel" || rm -f "$stage/$rel"
    else
        shown[$rel]=${f#"$dir/"}
        # copy only what changed: objects of unchanged files are reused
        cmp -s "$f" "$stage/$rel" || cp "$f" "$stage/$rel"
    fi
done
# nothing else in the copy (a file left there by an earlier grading)
declare -A listed
for rel in "${rels[@]}"; do listed[$rel]=1; done
while IFS= read -r f; do
    [ -n "${listed[$f]:-}" ] || rm -f "$stage/$f"
done < <(cd "$stage" && find . -type f | sed 's#^\./##')

echo "grading $dir ($found of ${#rels[@]} exercise files found)"
paths=$($make -s --no-print-directory grade-paths EXERCISES="$stage")
runner=${paths% *} exobj=${paths#* }

# The chapters' own code and the tests, which every grading links with:
# the first grading of a fresh clone builds them (minutes, and later ones
# reuse them), so it says so and names each folder as it starts on it.
: > "$log"
if ! $make -q --no-print-directory grade-libs EXERCISES="$stage" \
        > /dev/null 2>&1; then
    echo "building the chapters' code and the tests, once (later gradings" \
         "reuse them):"
    $make --no-print-directory grade-libs EXERCISES="$stage" 2>&1 \
        | tee -a "$log" \
        | awk '/^  (CC|CXX) / { d = $2; sub(/\/[^\/]*$/, "/", d)
                               if (d != last) { print "  " d; fflush() }
                               last = d }'
fi
# Each file on its own (-k): a file that does not compile is set aside.
if ! $make -q --no-print-directory grade-objs EXERCISES="$stage" \
        > /dev/null 2>&1; then
    echo "compiling the exercise files (each on its own)"
fi
$make -k --no-print-directory grade-objs EXERCISES="$stage" >> "$log" 2>&1
for rel in "${rels[@]}"; do
    id=$(ex_id "$rel")
    [ -f "$exobj/${rel%.*}.o" ] && continue
    msg=$(clean_log "$(head -n 12 "$exobj/${rel%.*}.o.log" 2>/dev/null)")
    msg=${msg//"$rel"/"${shown[$rel]:-$rel}"}
    first=$(grep -m 1 'error' <<< "$msg" || true)
    # the first error for the table, then the first lines for the output
    printf '%s\n%s\n' "${first:-${shown[$rel]:-$rel} does not compile}" \
        "$msg" > "$notes/$id.nobuild"
    standin "$rel"
done

# Link. An exercise that compiles can still fail to link (a function
# renamed, one defined twice): its stub takes its place too, twice at most.
# (Each try's messages in $link, and all of them in the log.)
link=$out/link.log
for try in 1 2 3; do
    $make --no-print-directory runner EXERCISES="$stage" > "$link" 2>&1
    rc=$?
    cat "$link" >> "$log"
    if [ "$rc" = 0 ]; then
        linked=1; break
    fi
    linked=0
    [ "$try" = 3 ] && break
    culprits=$(grep -e 'multiple definition' -e 'undefined reference' \
                    -e 'in function' "$link" \
               | grep -o 'ex[0-9]*_[0-9]*_[A-Za-z0-9_]*\.o' | sort -u)
    undef=$(sed -n "s/.*undefined reference to \`\([A-Za-z0-9_]*\)'.*/\1/p" \
            "$link" | sort -u)
    for sym in $undef; do
        culprits+=" $(cd "$stubdir" && grep -l "^[a-z].*[ *]$sym(" \
                      "${rels[@]}" 2>/dev/null | sed 's#.*/##; s#\.cu*$#.o#')"
    done
    changed=0
    for o in $culprits; do
        for rel in "${rels[@]}"; do
            b=${rel##*/}
            [ "${b%.*}" = "${o%.o}" ] || continue
            id=$(ex_id "$rel")
            s=$stubdir/$rel
            cmp -s "$s" "$stage/$rel" && continue    # already the stub
            # the linker's lines about this file or its functions
            pats=(-e "${o%.o}")
            for f in $(sed -n 's/^[a-z][^(]*[ *]\([A-Za-z0-9_]*\)(.*/\1/p' \
                       "$s" 2>/dev/null); do
                pats+=(-e "\`$f'")
            done
            msg=$(clean_log "$(grep "${pats[@]}" "$link" | head -n 12)")
            printf '%s does not link\n%s\n' "${shown[$rel]:-$rel}" "$msg" \
                > "$notes/$id.nobuild"
            standin "$rel" && changed=1
        done
    done
    [ "$changed" = 1 ] || break
done

# What still fails: the last try's messages, each once.
if [ "$linked" != 1 ]; then
    clean_log "$(cat "$link")" > "$log.clean"
    "${GRADER:?}" --compile-error "$log.clean" --json "$out/results.json"
    exit $?
fi
"$runner" --grade --json "$out/results.json" --notes "$notes"
