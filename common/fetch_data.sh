#!/usr/bin/env bash
# fetch_data.sh NAME : put a data set under data/, checked by sha256.
#
# Copies it from ../shared/data/ when that folder exists (the course
# machines have it), otherwise downloads it from its public source. Data
# files are never part of the repository.
set -euo pipefail

name=${1:?usage: fetch_data.sh tinyshakespeare|multi30k|bleu|gpt2}
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

# fetch_resumable DEST URL SIZE SHA256: a large download. The bytes go to
# DEST.part, which a later run continues (curl -C -) rather than starting
# again; the file gets its name only once its size and sha256 are right.
fetch_resumable() {
    local dest=$1 url=$2 size=$3 sum=$4 part=$1.part have
    if [ -f "$dest" ]; then return 0; fi
    have=$(stat -c %s "$part" 2>/dev/null || echo 0)
    if [ "$have" -gt "$size" ]; then rm -f "$part"; have=0; fi
    if [ "$have" -lt "$size" ]; then
        echo "data: downloading $url -> $dest ($size bytes$( \
            [ "$have" -gt 0 ] && echo ", resuming at $have"))"
        command -v curl >/dev/null || { echo "error: make gpt2 needs" \
            "curl (apt-get install curl)" >&2; exit 1; }
        # a progress bar on a terminal, nothing in a log
        local show=-s
        [ -t 2 ] && show=--progress-bar
        curl -fL $show --retry 3 -C - -o "$part" "$url" || {
            echo "error: download of $url failed; run make gpt2 again" \
                 "to resume it" >&2; exit 1; }
    fi
    have=$(stat -c %s "$part")
    if [ "$have" != "$size" ]; then
        rm -f "$part"
        echo "error: $dest: $have bytes, expected $size" >&2; exit 1
    fi
    if ! echo "$sum  $part" | sha256sum -c --status; then
        rm -f "$part"
        echo "error: $dest: sha256 mismatch (expected $sum)" >&2; exit 1
    fi
    mv "$part" "$dest"
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
    multi30k)
        # Multi30k (task 1: English-German captions of Flickr30k images),
        # as gzipped files; each is checked, then unpacked. train.de is
        # unpacked last: the Makefile takes it as the sign that all six
        # are there.
        mkdir -p data/multi30k
        m30k=https://raw.githubusercontent.com/multi30k/dataset/master/data/task1/raw
        while read -r sum file; do
            [ -f "data/multi30k/$file" ] && continue
            fetch "data/multi30k/$file.gz" "$shared/multi30k/$file.gz" \
                "$m30k/$file.gz" "$sum"
            tmp=$(mktemp "data/multi30k/$file.XXXXXX")
            gzip -dc "data/multi30k/$file.gz" > "$tmp" || { rm -f "$tmp";
                echo "error: cannot unpack data/multi30k/$file.gz" >&2; exit 1; }
            mv "$tmp" "data/multi30k/$file"
            rm -f "data/multi30k/$file.gz"
        done <<'SUMS'
f0cba2f995189cf5770f29a8a9a537a3ad3f51657ad873405082ff6863a5e75a val.de
14f7d25ddd868909a9213e361768460edcacdd6ab9d1e77b92560dc10c10dc28 val.en
9204244e408ccb38d2a55cfcd344df15005fc42a07a6e55ca6c52b6ababb8cc8 test_2016_flickr.de
611d361c6334bc7246101d48097c13cf5c4413c5befc793cc629934359d532d9 test_2016_flickr.en
d79cfa999dd4c51d2cb42499b6796d5a882c3a8a961923c25a898c90f8bbd56f train.en
726e39b2fa9eb9ffb6dc763fb35a179f80fae06ffc5d28b6ace5faa883de28a6 train.de
SUMS
        ;;
    gpt2)
        # GPT-2 small (chapter 9): OpenAI's weights as Hugging Face
        # publishes them, at one fixed revision of its gpt2 repository, so
        # the files can never change under the checksums below. About 550
        # MB; an interrupted download resumes where it stopped.
        # GPT2_MIRROR replaces the repository's address (a local copy,
        # file:///path/to/folder, for a machine without the network).
        rev=607a30d783dfa663caf39e06633721c8d4cfcd7e
        base=${GPT2_MIRROR:-https://huggingface.co/openai-community/gpt2/resolve/$rev}
        mkdir -p data/gpt2
        while read -r size sum file; do
            fetch_resumable "data/gpt2/$file" "$base/$file" "$size" "$sum"
        done <<'SUMS'
665 0daed7749b4f02b8f76240d5444551d7b08712dab4d0adb8239c56ba823bb7b4 config.json
1042301 196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783 vocab.json
456318 1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5 merges.txt
548105171 248dfc3911869ec493c76e65bf2fcf7f615828b0254c12b473182f0f81d3a707 model.safetensors
SUMS
        echo "data: GPT-2 small is in data/gpt2/ (try ./ch9)" ;;
    *) echo "error: unknown data set '$name'" >&2; exit 2 ;;
esac
