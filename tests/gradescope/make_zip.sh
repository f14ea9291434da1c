#!/usr/bin/env bash
# make_zip.sh ZIP - what `make gradescope` runs, from the repository root:
# Gradescope's autograder zip. At its top setup.sh and run_autograder (from
# tests/gradescope/), beside the sources that grading builds (Makefile,
# common/, chapters/, tests/, and exercises/ with the stubs of
# tests/stubs.manifest, whatever this tree's exercises/ holds now), the
# data the exercises' tests read (data/tinyshakespeare.txt, and
# sacreBLEU's numbers for exercise 7.7 when data/ has them) and VERSION
# (the commit). Never solutions/: in some setups students can read the
# autograder's files.
set -euo pipefail
zipf=${1:?usage: make_zip.sh ZIP}
mkdir -p "$(dirname "$zipf")"
zipf=$(cd "$(dirname "$zipf")" && pwd)/$(basename "$zipf")
work=$zipf.d
rm -rf "$zipf" "$work"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT

paths=(Makefile LICENSE common chapters tests)
# the files git knows or would add (no build outputs); every file of
# those folders in a copy that is no git checkout
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -c -o --exclude-standard -- "${paths[@]}" > "$work/all"
else
    find "${paths[@]}" -type f ! -name '*.o' ! -name '*.d' \
        ! -path '*/__pycache__/*' > "$work/all"
fi
for f in data/tinyshakespeare.txt data/bleu/sacrebleu_2.6.0_vectors.json; do
    echo "$f" >> "$work/all"
done
# (a file deleted but not yet committed is listed by git: left out)
sort -u "$work/all" | while IFS= read -r f; do
    [ -f "$f" ] && printf '%s\n' "$f"
done > "$work/list"
if ! grep -qx data/tinyshakespeare.txt "$work/list"; then
    echo "error: no data/tinyshakespeare.txt (make data fetches it):" \
         "exercise 1's tests read it" >&2
    exit 1
fi
if grep -q '^solutions/' "$work/list"; then
    echo "error: solutions/ would be in the autograder zip" >&2
    exit 1
fi

# the stubs (setup.sh checks that they score 0), never a student's answers
bash tests/stubs.sh "$work/exercises"
n=$(( $(wc -l < "$work/list") + $(find "$work/exercises" -type f | wc -l) ))

( git describe --always --dirty 2>/dev/null || echo "no git commit" ) \
    > "$work/VERSION"
cp tests/gradescope/setup.sh tests/gradescope/run_autograder "$work/"
zip -q "$zipf.tmp" -@ < "$work/list"
(cd "$work" \
    && zip -q -r -D "$zipf.tmp" exercises setup.sh run_autograder VERSION)
mv "$zipf.tmp" "$zipf"
echo "wrote ${1} ($n files and the scripts," \
     "$(du -k "$zipf" | cut -f 1) KB, $(cat "$work/VERSION")): upload it" \
     "to Gradescope as the autograder"
