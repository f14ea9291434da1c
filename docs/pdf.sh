#!/usr/bin/env bash
# docs/pdf.sh -- print the single-page book to a PDF with headless Chromium.
#
# Usage (from the repository root; `make pdf` runs make docs first):
#
#   bash docs/pdf.sh            docs/site/book.html -> docs/site/book.pdf
#
# No LaTeX: the browser prints the page as it shows it, with the print
# rules at the end of docs/style.css (A4, each chapter on a new page, no
# navigation bars). Then pdfinfo and pdftotext (poppler-utils) check the
# result: every chapter's heading must be the first line of a page, and
# no flag of inline code (--checkpoint) may be broken after its dashes.
#
# Environment: CHROMIUM, the browser to run (default: chromium).
set -euo pipefail

die() { echo "pdf.sh: error: $*" >&2; exit 1; }

SITE=docs/site
IN=$SITE/book.html
OUT=$SITE/book.pdf
CHROMIUM=${CHROMIUM:-chromium}

[[ -f $IN ]] || die "no $IN (run make docs first)"
command -v "$CHROMIUM" >/dev/null 2>&1 ||
  die "$CHROMIUM not found; install it, e.g. 'apt-get install chromium'"
for t in pdfinfo pdftotext; do
  command -v $t >/dev/null 2>&1 ||
    die "$t not found; install it, e.g. 'apt-get install poppler-utils'"
done

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
rm -f "$OUT"
# --no-sandbox: root (as in CI) cannot use the sandbox, and the page is
# our own file. Chromium's own log goes to a file: it complains about
# D-Bus on every start, and matters only when printing failed.
if ! "$CHROMIUM" --headless --no-sandbox --disable-gpu \
     --disable-dev-shm-usage --no-first-run --disable-extensions \
     --user-data-dir="$TMP/profile" --no-pdf-header-footer \
     --print-to-pdf="$OUT" "file://$(pwd)/$IN" >"$TMP/log" 2>&1 ||
   [[ ! -s $OUT ]]; then
  grep -v dbus "$TMP/log" | tail -n 5 >&2
  die "chromium could not print $IN (its last lines above)"
fi

pages=$(pdfinfo "$OUT" | awk '/^Pages:/ { print $2 }')
# The chapters' top headings ("# Chapter N: ..." in each chN.md; the
# book's title is an h1 too, of class "title").
chapters=$(grep -c '^<h1 id="[^"]*">Chapter [0-9]' "$IN" || true)
# pdftotext ends each page with a form feed: the first line of text of
# each page that starts a chapter ("Chapter 6: Training"; a paragraph
# that opens with "Chapter 6's trainer" or the help text's "Chapter 6:
# train the GPT" may begin a page too, and is not a heading).
starts=$(pdftotext -layout "$OUT" - |
  awk 'BEGIN { RS = "\f" }
       { n = split($0, line, "\n")
         for (i = 1; i <= n; i++)
           if (line[i] ~ /[^ \t]/) {
             if (line[i] ~ /^[ \t]*Chapter [0-9]+: [A-Z]/) c++
             break
           } }
       END { print c + 0 }')
((chapters > 0)) || die "$IN has no chapter headings"
((starts == chapters)) ||
  die "$OUT: only $starts of the $chapters chapters begin a page (the" \
      "print rules at the end of docs/style.css put each on a new one;" \
      "the PDF is left there to look at)"
# A flag of inline code broken after its dashes: a line that ends in
# "--" alone, and the next goes on with the flag's name (the
# print rules keep such a flag whole: docs/include.lua, code .nobr).
broken=$(pdftotext -layout "$OUT" - |
  awk '{ sub(/[ \t]+$/, "") }
       prev ~ /(^|[ (])--$/ && prev !~ /^[ \t-]*$/ && $0 ~ /^[ \t]*[A-Za-z]/ {
         print "  " prev " / " $0; n++ }
       { prev = $0 }
       END { exit n > 0 }') ||
  die "$OUT: flags broken after their dashes at the end of a line:
$(head -n 5 <<<"$broken")"
echo "wrote $OUT: $pages pages, each of the $chapters chapters from a new page"
