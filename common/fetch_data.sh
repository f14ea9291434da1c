#!/usr/bin/env bash
# fetch_data.sh NAME : put a data set under data/, checked by sha256.
#
# Copies it from ../shared/data/ when that folder exists (the course
# machines have it), otherwise downloads it from its public source. Data
# files are never part of the repository.
set -euo pipefail

name=${1:?usage: fetch_data.sh tinyshakespeare}
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
    *) echo "error: unknown data set '$name'" >&2; exit 2 ;;
esac
