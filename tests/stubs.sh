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

# blob_id FILE: git's id of FILE's contents, with or without git
blob_id() {
    { printf 'blob %d\0' "$(wc -c < "$1")"; cat "$1"; } | sha1sum \
        | cut -c 1-40
}
# the manifest's lines, "ID PATH", without its comments
entries() {
    if [ ! -f "$manifest" ]; then
        echo "error: no $manifest (run from the repository root)" >&2
        return 2
    fi
    grep -v -e '^#' -e '^$' "$manifest"
}

case ${1:-} in
--list)
    entries | cut -d ' ' -f 2
    ;;
--check)
    dir=${2:-exercises}
    dir=${dir%/}
    list=$(entries) || exit 2
    declare -A known
    problems=()
    while read -r id rel; do
        known[$rel]=1
        if [ ! -f "$dir/$rel" ]; then
            problems+=("$rel is missing")
        elif [ "$(blob_id "$dir/$rel")" != "$id" ]; then
            problems+=("$rel is not its stub")
        fi
    done <<< "$list"
    # and nothing else
    while IFS= read -r f; do
        [ -n "${known[$f]:-}" ] || problems+=("$f is not in the manifest")
    done < <(cd "$dir" && find . -type f | sed 's#^\./##' | LC_ALL=C sort)
    if [ ${#problems[@]} -gt 0 ]; then
        echo "error: $dir/ is not the stubs of $manifest:" >&2
        printf '  %s\n' "${problems[@]}" >&2
        echo "(after changing a stub: make stubs-manifest)" >&2
        exit 1
    fi
    ;;
--write)
    [ -d exercises ] || { echo "error: no exercises/ here" >&2; exit 2; }
    {
        echo "# tests/stubs.manifest - every file of exercises/ as the course"
        echo "# gives it: git's blob id of its contents, and its path under"
        echo "# exercises/. Written by \`make stubs-manifest\`, read by"
        echo "# tests/stubs.sh; CI fails when exercises/ differs from it."
        (cd exercises && find . -type f | sed 's#^\./##' | LC_ALL=C sort) \
            | while IFS= read -r rel; do
                echo "$(blob_id "exercises/$rel") $rel"
            done
    } > "$manifest.tmp" && mv "$manifest.tmp" "$manifest" || exit 1
    # the stubs into git's object store too, where `git cat-file` finds
    # them before they are committed
    if git rev-parse --git-dir > /dev/null 2>&1; then
        find exercises -type f | git hash-object -w --stdin-paths \
            > /dev/null
    fi
    echo "wrote $manifest ($(entries | wc -l) stubs)"
    ;;
''|-*)
    echo "usage: bash tests/stubs.sh DEST | --list | --check [DIR] |" \
         "--write" >&2
    exit 2
    ;;
*)
    dest=${1%/}
    list=$(entries) || exit 2
    lost=0
    while read -r id rel; do
        mkdir -p "$dest/${rel%/*}" || exit 1
        tmp=$dest/$rel.tmp$$
        if [ -f "$dest/$rel" ] && [ "$(blob_id "$dest/$rel")" = "$id" ]; then
            continue                          # there from an earlier run
        elif [ -f "exercises/$rel" ] \
             && [ "$(blob_id "exercises/$rel")" = "$id" ]; then
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
        echo "error: so $lost of the stubs are not in $dest/; a git clone" \
             "of the course has them all" >&2
        exit 1
    fi
    ;;
esac
