#!/usr/bin/env bash
# grade.sh - what `make check EXERCISES=DIR` runs for any folder but
# solutions/:   MAKE=make GRADER=grade_nocode bash tests/grade.sh DIR OUT
#
# The student's files are copied into OUT/src under the names of the stubs
# (so a path with spaces, which make cannot handle, never reaches make),
# and each is compiled on its own. A file that is absent or does not
# compile is replaced by its stub from exercises/: that exercise scores 0
# and says why (OUT/notes/ID.missing or ID.nobuild, read by the runner),
# and the others are graded. Writes OUT/results.json; the exit status is
# 0 whenever it was written, 2 when DIR holds no exercise at all.
set -u
dir=${1%/} out=$2
make=${MAKE:-make}
stage=$out/src notes=$out/notes log=$out/build.log
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

# The exercises are those of exercises/: chN/exN_M_name.c, or .cu (the
# GPU kernels of chapter 8, built under the emulation)
shopt -s nullglob
stubs=(exercises/ch[0-9]*/ex[0-9]*_[0-9]*_*.c exercises/ch[0-9]*/ex[0-9]*_[0-9]*_*.cu)
shopt -u nullglob
# ch1/ex1_2_batch.c -> 1.2
ex_id() { sed 's/^ch[0-9]*\/ex\([0-9]*\)_\([0-9]*\)_.*/\1.\2/' <<< "$1"; }
# the student's file for stub $1: same name first, else any exN_M_*.c
# (exN_M_*.cu for a .cu stub)
student_file() {
    local ch=${1%/*} base=${1##*/} prefix m
    prefix=$(sed 's/^\(ex[0-9]*_[0-9]*_\).*/\1/' <<< "$base")
    [ -f "$dir/${ch#exercises/}/$base" ] \
        && { echo "$dir/${ch#exercises/}/$base"; return; }
    for m in "$dir/${ch#exercises/}/$prefix"*."${base##*.}"; do
        [ -f "$m" ] && { echo "$m"; return; }
    done
}

found=0
for s in "${stubs[@]}"; do
    [ -n "$(student_file "$s")" ] && found=$((found + 1))
done
if [ "$found" = 0 ]; then
    hint=$(find "$dir" -mindepth 2 -maxdepth 4 -path '*/ch1/ex1_1_*.c' \
           2>/dev/null | sort | head -n 1)
    [ -n "$hint" ] && hint="; try EXERCISES='${hint%/ch1/*}'"
    last=$(printf '%s\n' "${stubs[@]}" | cut -d / -f 2 | sort -u -V \
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
declare -A shown     # stub -> the student's file as the messages name it
for s in "${stubs[@]}"; do
    rel=${s#exercises/}
    id=$(ex_id "$rel")
    mkdir -p "$stage/${rel%/*}"
    f=$(student_file "$s")
    if [ -z "$f" ]; then
        src=$s
        printf 'no %s*.%s in the folder (graded as the stub: 0 points)\n' \
            "$(sed 's/^\(ch[0-9]*\/ex[0-9]*_[0-9]*_\).*/\1/' <<< "$rel")" \
            "${rel##*.}" \
            > "$notes/$id.missing"
    else
        src=$f
        shown[$s]=${f#"$dir/"}
    fi
    # copy only what changed: objects of unchanged files are reused
    cmp -s "$src" "$stage/$rel" || cp "$src" "$stage/$rel"
done
# nothing else in the copy (a file left there by an earlier grading)
find "$stage" -type f ! -name 'ex[0-9]*_[0-9]*_*.c' \
    ! -name 'ex[0-9]*_[0-9]*_*.cu' -delete 2>/dev/null
for f in "$stage"/ch*/*.c "$stage"/ch*/*.cu; do
    [ -f "exercises/${f#"$stage/"}" ] || rm -f "$f"
done

echo "grading $dir ($found of ${#stubs[@]} exercise files found)"
paths=$($make -s --no-print-directory grade-paths EXERCISES="$stage")
runner=${paths% *} exobj=${paths#* }

# Each file on its own (-k): a file that does not compile is set aside.
$make -k --no-print-directory grade-objs EXERCISES="$stage" > "$log" 2>&1
for s in "${stubs[@]}"; do
    rel=${s#exercises/}
    id=$(ex_id "$rel")
    [ -f "$exobj/${rel%.*}.o" ] && continue
    msg=$(clean_log "$(head -n 12 "$exobj/${rel%.*}.o.log" 2>/dev/null)")
    msg=${msg//"$rel"/"${shown[$s]:-$rel}"}
    first=$(grep -m 1 'error' <<< "$msg" || true)
    # the first error for the table, then the first lines for the output
    printf '%s\n%s\n' "${first:-${shown[$s]:-$rel} does not compile}" "$msg" \
        > "$notes/$id.nobuild"
    cp "$s" "$stage/$rel"
done

# Link. An exercise that compiles can still fail to link (a function
# renamed, one defined twice): its stub takes its place too, twice at most.
for try in 1 2 3; do
    if $make --no-print-directory runner EXERCISES="$stage" >> "$log" 2>&1; then
        linked=1; break
    fi
    linked=0
    [ "$try" = 3 ] && break
    culprits=$(grep -e 'multiple definition' -e 'undefined reference' \
                    -e 'in function' "$log" \
               | grep -o 'ex[0-9]*_[0-9]*_[A-Za-z0-9_]*\.o' | sort -u)
    undef=$(sed -n "s/.*undefined reference to \`\([A-Za-z0-9_]*\)'.*/\1/p" \
            "$log" | sort -u)
    for sym in $undef; do
        culprits+=" $(grep -l "^[a-z].*[ *]$sym(" "${stubs[@]}" 2>/dev/null \
                      | sed 's#.*/##; s#\.cu*$#.o#')"
    done
    changed=0
    for o in $culprits; do
        for s in "${stubs[@]}"; do
            b=${s##*/}
            [ "${b%.*}" = "${o%.o}" ] || continue
            rel=${s#exercises/}
            id=$(ex_id "$rel")
            cmp -s "$s" "$stage/$rel" && continue    # already the stub
            # the linker's lines about this file or its functions
            pats=(-e "${o%.o}")
            for f in $(sed -n 's/^[a-z][^(]*[ *]\([A-Za-z0-9_]*\)(.*/\1/p' \
                       "$s"); do
                pats+=(-e "\`$f'")
            done
            msg=$(clean_log "$(grep "${pats[@]}" "$log" | head -n 12)")
            printf '%s does not link\n%s\n' "${shown[$s]:-$rel}" "$msg" \
                > "$notes/$id.nobuild"
            cp "$s" "$stage/$rel"
            changed=1
        done
    done
    [ "$changed" = 1 ] || break
done

if [ "$linked" != 1 ]; then
    clean_log "$(cat "$log")" > "$log.clean"
    "${GRADER:?}" --compile-error "$log.clean" --json "$out/results.json"
    exit $?
fi
"$runner" --grade --json "$out/results.json" --notes "$notes"
