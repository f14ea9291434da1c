#!/usr/bin/env bash
# fetch_data.sh NAME : put a data set under data/, checked by sha256.
#
# Copies it from ../shared/data/ when that folder exists (the course
# machines have it), otherwise downloads it from its public source. Data
# files are never part of the repository.
set -euo pipefail

name=${1:?usage: fetch_data.sh tinyshakespeare|bleu}
shared=../shared/data
mkdir -p data

fetch() {   # fetch DEST SHARED_PATH URL SHA256
    local dest=$1 local_copy=$2 url=$3 sum=$4 tmp
    tmp=$(mktemp "$dest.XXXXXX")
    if [ -f "$local_copy" ]; then
        echo "data: copying $local_copy -> $dest"
        cp "$local_copy" "$tmp"
    else
        echo "data: downloading $url -> $dest"
        if command -v curl >/dev/null; then
            curl -fsSL --retry 3 -o "$tmp" "$url" || { rm -f "$tmp";
                echo "error: download of $url failed" >&2; exit 1; }
        else
            wget -q -O "$tmp" "$url" || { rm -f "$tmp";
                echo "error: download of $url failed" >&2; exit 1; }
        fi
    fi
    if ! echo "$sum  $tmp" | sha256sum -c --status; then
        rm -f "$tmp"
        echo "error: $dest: sha256 mismatch (expected $sum)" >&2
        exit 1
    fi
    mv "$tmp" "$dest"       # only a verified file ever has the final name
}

case $name in
    tinyshakespeare)
        fetch data/tinyshakespeare.txt "$shared/tinyshakespeare.txt" \
            https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt \
            86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed ;;
    bleu)   # sacreBLEU's reference numbers: no public copy, only ../shared
        f=sacrebleu_2.6.0_vectors.json
        if [ ! -f "$shared/bleu/$f" ]; then
            echo "data: no $shared/bleu/$f; the BLEU tests skip its cases"
            exit 0
        fi
        mkdir -p data/bleu
        fetch "data/bleu/$f" "$shared/bleu/$f" "(no public download)" \
            317e20a315c05226ff479451a0f222a96f9854add1dc54951c4b9e3028a5ec3b ;;
    *) echo "error: unknown data set '$name'" >&2; exit 2 ;;
esac
