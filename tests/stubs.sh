#!/usr/bin/env bash
# stubs.sh - the stubs of exercises/ as the course gives them, whatever a
# student has written there since. tests/stubs.manifest names each file
# of exercises/ by its path and git's id of its contents (the sha1 of
# "blob SIZE\0" and its bytes: what `git hash-object FILE` prints, and
# what this script computes without git). Run from the repository root:
#
#   bash tests/stubs.sh DEST      the stubs into DEST, laid out as
#                                 exercises/ is (make stubs: build/stubs/)
#   bash tests/stubs.sh --list    the paths of the stubs (ch1/ex1_1_vocab.c)
#   bash tests/stubs.sh --check [DIR]
#                                 DIR (default exercises/) holds the stubs
#                                 of the manifest and nothing else (CI)
#   bash tests/stubs.sh --write   the manifest anew from exercises/ (make
#                                 stubs-manifest, after changing a stub)
#
# Everything that needs the stubs reads them from a DEST: the grader's
# stand-ins for a file that does not compile (tests/grade.sh), its own
# test that the stubs score 0 (tests/test_grade.sh), the autograder's zip
# (tests/gradescope/make_zip.sh). A student's exercises/ is only graded.
#
# A file of exercises/ that is still its stub is copied. For one that a
# student changed, deleted or committed over, git's history still holds
# the stub: `git cat-file blob ID`. Without git, or with a history that
# lacks it, DEST lacks that stub, a line says so and the status is 1 (the
# grader needs it only when that file does not compile).
set -u
manifest=tests/stubs.manifest

# ids FILE...: "ID FILE" a line, ID being git's id of FILE's contents (one
# git process for all of them; without git, sha1sum file by file)
ids() {
    local f out
    [ $# -gt 0 ] || return 0
    if command -v git > /dev/null \
       && out=$(git hash-object --no-filters -- "$@" 2> /dev/null); then
        paste -d ' ' <(printf '%s\n' "$out") <(printf '%s\n' "$@")
    else
        for f in "$@"; do
            echo "$({ printf 'blob %d\0' "$(wc -c < "$f")"; cat "$f"; } \
                    | sha1sum | cut -c 1-40) $f"
        done
    fi
}
# the manifest's lines, "ID PATH", without its comments
entries() {
    if [ ! -f "$manifest" ]; then
        echo "error: no $manifest (run from the repository root)" >&2
        return 2
    fi
    grep -v -e '^#' -e '^$' "$manifest"
}
# files DIR: the paths of the files under DIR, sorted
files() { (cd "$1" && find . -type f | sed 's#^\./##' | LC_ALL=C sort); }
# hash_files FILE...: id_of[FILE] is the id of each FILE that exists
declare -A id_of
hash_files() {
    local f id existing=()
    for f in "$@"; do [ -f "$f" ] && existing+=("$f"); done
    while read -r id f; do
        id_of[$f]=$id
    done < <(ids "${existing[@]}")
}

case ${1:-} in
--list)
    entries | cut -d ' ' -f 2
    ;;
--check)
    dir=${2:-exercises}
    dir=${dir%/}
    list=$(entries) || exit 2
    mapfile -t rels < <(cut -d ' ' -f 2 <<< "$list")
    hash_files "${rels[@]/#/"$dir/"}"
    declare -A known
    problems=()
    while read -r id rel; do
        known[$rel]=1
        if [ ! -f "$dir/$rel" ]; then
            problems+=("$rel is missing")
        elif [ "${id_of[$dir/$rel]:-}" != "$id" ]; then
            problems+=("$rel is not its stub")
        fi
    done <<< "$list"
    # and nothing else
    while IFS= read -r f; do
        [ -n "${known[$f]:-}" ] || problems+=("$f is not in the manifest")
    done < <(files "$dir")
    if [ ${#problems[@]} -gt 0 ]; then
        echo "error: $dir/ is not the stubs of $manifest:" >&2
        printf '  %s\n' "${problems[@]}" >&2
        echo "(after changing a stub: make stubs-manifest)" >&2
        exit 1
    fi
    ;;
--write)
    [ -d exercises ] || { echo "error: no exercises/ here" >&2; exit 2; }
    mapfile -t all < <(files exercises)
    {
        echo "# tests/stubs.manifest - every file of exercises/ as the course"
        echo "# gives it: git's blob id of its contents, and its path under"
        echo "# exercises/. Written by \`make stubs-manifest\`, read by"
        echo "# tests/stubs.sh; CI fails when exercises/ differs from it."
        (cd exercises && ids "${all[@]}")
    } > "$manifest.tmp" && mv "$manifest.tmp" "$manifest" || exit 1
    # the stubs into git's object store too, where `git cat-file` finds
    # them before they are committed
    if git rev-parse --git-dir > /dev/null 2>&1; then
        (cd exercises && git hash-object -w -- "${all[@]}") > /dev/null
    fi
    echo "wrote $manifest (${#all[@]} stubs)"
    ;;
''|-*)
    echo "usage: bash tests/stubs.sh DEST | --list | --check [DIR] |" \
         "--write" >&2
    exit 2
    ;;
*)
    dest=${1%/}
    list=$(entries) || exit 2
    mapfile -t rels < <(cut -d ' ' -f 2 <<< "$list")
    hash_files "${rels[@]/#/exercises/}" "${rels[@]/#/"$dest/"}"
    lost=0
    while read -r id rel; do
        mkdir -p "$dest/${rel%/*}" || exit 1
        tmp=$dest/$rel.tmp$$
        if [ "${id_of[$dest/$rel]:-}" = "$id" ]; then
            continue                          # there from an earlier run
        elif [ "${id_of[exercises/$rel]:-}" = "$id" ]; then
            cp "exercises/$rel" "$tmp"
        elif ! git cat-file blob "$id" > "$tmp" 2> /dev/null; then
            rm -f "$tmp" "$dest/$rel"
            echo "error: $rel: changed, and not in git's history" >&2
            lost=$((lost + 1))
            continue
        fi
        # (renamed into place: a reader never sees half a file)
        mv -f "$tmp" "$dest/$rel"
    done <<< "$list"
    if [ "$lost" -gt 0 ]; then
        echo "error: $lost stubs missing: a git clone of the course has" \
             "them all" >&2
        exit 1
    fi
    ;;
esac
