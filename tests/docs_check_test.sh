#!/usr/bin/env bash
# docs_check_test.sh - proves that docs/check_site.py (make docs-check)
# catches what it promises to catch. It builds two small sites in a temp
# folder: a good one, which must pass, and a broken one, one page per kind
# of problem, whose check must fail with one line per problem that names
# the page and says what is wrong, and nothing about its good page. Then
# a tiny book rendered by docs/build.sh, so that the check is shown to
# read what the real pipeline writes (and the build to refuse an empty
# region). Also
# the usage errors. Run from the repository root (make docs-check runs it
# before checking the real site; needs chromium, python3 and pandoc):
#
#   bash tests/docs_check_test.sh
#
# About 20 seconds: Chromium starts three times, pandoc a few.
set -u
ROOT=$(pwd)
CHECK=(python3 "$ROOT/docs/check_site.py")
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
passed=0 failed=0

ok() { passed=$((passed + 1)); }
fail() { echo "FAIL: $*" >&2; failed=$((failed + 1)); }

# page FILE BODY: a minimal HTML page
page() {
    mkdir -p "$(dirname "$1")"
    printf '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">%s\n' \
        '<title>t</title></head><body>' >"$1"
    printf '%s\n</body></html>\n' "$2" >>"$1"
}

# A figure that loads: a small SVG with a size.
svg='<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20">
<rect width="40" height="20" fill="teal"/></svg>'
# Math as pandoc --mathml writes it.
mathml='xmlns="http://www.w3.org/1998/Math/MathML"'
math="<math display=\"inline\" $mathml><semantics>
<msup><mi>x</mi><mn>2</mn></msup>
<annotation encoding=\"application/x-tex\">x^2</annotation></semantics></math>"
# An included listing as docs/include.lua writes it.
listing() {
    printf '<div class="listing"><div class="srcref">%s %s</div>%s%s%s' \
        '<code>chapters/ch1_data/vocab.c</code>' \
        '<span class="region">encode</span>' \
        '<div class="sourceCode"><pre class="sourceCode c">' \
        "<code class=\"sourceCode c\">$1</code>" '</pre></div></div>'
}

# ---- a good site: everything the checker looks at, done right
G=$TMP/good
mkdir -p "$G/figures"
echo "$svg" >"$G/figures/dot.svg"
page "$G/index.html" "<h1 id=\"top\">Home</h1>
<p><a href=\"page2.html\">page 2</a>,
<a href=\"page2.html#sec-2\">its section</a>, <a href=\"#top\">top</a>,
<a href=\"#\">also top</a>, <a href=\"sub/\">a folder</a>,
<a href=\"https://example.com/\">the web (not loaded, not checked)</a>,
<a href=\"mailto:someone@example.com\">mail</a>.</p>
<figure><img src=\"figures/dot.svg\" alt=\"dot\">
<figcaption>A dot</figcaption></figure>
<p>Inline math $math and a block:</p>
<math display=\"block\"><mfrac><mi>a</mi><mi>b</mi></mfrac></math>
<span class=\"math inline\">$math</span>
<details><summary>closed</summary><p>math in a closed box: $math</p></details>
<div style=\"display: none\">hidden math has no size: $math</div>
$(listing 'int x = 1;')"
page "$G/page2.html" "<h2 id=\"sec-2\">Section 2</h2>
<a href=\"index.html#top\">back</a>
<div style=\"height: 20000px\">a lazy image far below loads when checked:</div>
<img src=\"figures/dot.svg\" alt=\"dot\" loading=\"lazy\">
<script>console.log('a log line is fine');</script>"
page "$G/sub/index.html" "<a href=\"../index.html\">up</a>"

"${CHECK[@]}" --shots "$TMP/shots" "$G" >"$TMP/out" 2>"$TMP/err"
rc=$?
if [ $rc = 0 ] && grep -qF "docs-check: 3 page(s) OK" "$TMP/out"; then
    ok
else
    fail "the good site: exit status $rc, expected 0 and '3 page(s) OK'"
    sed 's/^/    /' "$TMP/out" "$TMP/err" >&2
fi
for shot in index-desktop index-phone page2-desktop page2-phone \
            sub_index-desktop sub_index-phone; do
    # a PNG starts with these 8 bytes
    if [ "$(head -c 8 "$TMP/shots/$shot.png" 2>/dev/null | od -An -tx1 |
            tr -d ' \n')" = 89504e470d0a1a0a ]; then
        ok
    else
        fail "no screenshot $shot.png of the good site"
    fi
done

# ---- a broken site: one page per problem, and one good page
B=$TMP/broken
mkdir -p "$B/figures"
echo "$svg" >"$B/figures/dot.svg"
echo "not part of the site" >"$TMP/outside.txt"
page "$B/ok.html" "<h2 id=\"sec\">Fine</h2><a href=\"link.html\">x</a>
<img src=\"figures/dot.svg\" alt=\"dot\"> $math $(listing 'int x;')"
page "$B/link.html" '<a href="nope.html">missing page</a>'
page "$B/anchor.html" '<a href="ok.html#sec">fine</a>
<a href="ok.html#nowhere">bad anchor</a> <a href="#here">bad local anchor</a>'
page "$B/outside.html" '<a href="../outside.txt">outside</a>'
page "$B/folder.html" '<a href="figures/">the figures</a>'
page "$B/image.html" '<h2>Figures</h2>
<figure><img src="figures/gone.svg" alt="gone">
<figcaption>Gone</figcaption></figure>'
page "$B/figure.html" \
    '<figure><figcaption>A lonely caption</figcaption></figure>'
page "$B/code.html" "<h2>The encoder</h2>$(listing '')"
page "$B/code-plain.html" '<pre><code>  </code></pre>'
page "$B/math-empty.html" "<math display=\"inline\" $mathml><semantics>
<mrow></mrow><annotation encoding=\"application/x-tex\">y_1</annotation>
</semantics></math>"
page "$B/math-zero.html" \
    '<p>Squashed: <math style="font-size: 0"><mi>z</mi></math></p>'
page "$B/math-error.html" \
    '<math><merror><mtext>bad TeX</mtext></merror></math>'
page "$B/math-tex.html" \
    '<p>Unconverted: <span class="math inline">\(\frac{a}{b}\)</span></p>'
page "$B/console.html" '<script>console.error("something broke");</script>'
page "$B/exception.html" '<script>null.f();</script>'
page "$B/network.html" \
    '<link rel="stylesheet" href="https://example.com/x.css">'
page "$B/css.html" '<link rel="stylesheet" href="missing.css">'
# the layout: a column squeezed by pandoc's equal widths beside one of
# short words; a flag broken after its dashes; a figure whose labels are
# drawn far smaller than the text; on the index, a table wider than a
# phone. Every width that matters is given in pixels (boxes of a set
# width, not text measured in whatever fonts this machine has), so that
# each page has its problem on any machine.
box() { printf '<span style="display: inline-block; width: %s">%s</span>' "$@"; }
page "$B/table.html" "<main><table style=\"width: 600px\"><colgroup>
<col style=\"width: 50%\"><col style=\"width: 50%\"></colgroup>
<tr><td>$(box 40px ./ch1)</td><td>$(box 250px 'a long text that must wrap in a
column of half the table,') $(box 250px 'while the short one beside it keeps
most of its half empty')</td></tr>
</table></main>"
page "$B/flag.html" '<main><p style="width: 40px; font: 16px monospace">
<code style="font: inherit">--checkpoint</code></p></main>'
printf '%s
' '<svg xmlns="http://www.w3.org/2000/svg" width="400" height="60">'     '<g font-family="sans-serif" font-size="6.00"><text x="10" y="30">tiny'     'labels</text></g></svg>' >"$B/figures/tiny.svg"
page "$B/labels.html" '<main><p style="font-size: 16px">Text of 16 px.</p><figure>
<img src="figures/tiny.svg" alt="tiny"><figcaption>Tiny</figcaption>
</figure></main>'
page "$B/wide.html" "<main class=\"page-index\"><table><tr>
<td>$(box 600px 'a row of text far wider than any phone, on one line')</td>
<td>the status</td></tr></table></main>"
# (a phone lays out a page of its own width only where the page says so)
sed -i 's|<meta charset="utf-8">|&<meta name="viewport" content="width=device-width">|' \
    "$B/wide.html"

"${CHECK[@]}" "$B" >"$TMP/out" 2>"$TMP/err"
rc=$?
if [ $rc = 1 ]; then ok; else
    fail "the broken site: exit status $rc, expected 1"
fi
if [ -s "$TMP/out" ]; then
    fail "the broken site: printed on stdout:"
    sed 's/^/    /' "$TMP/out" >&2
fi

# expect PAGE COUNT TEXT...: stderr has exactly COUNT lines about PAGE,
# and each TEXT is in one of them.
expect() {
    local pg=$1 count=$2 n t
    shift 2
    n=$(grep -cF "docs-check: $pg: " "$TMP/err")
    if [ "$n" = "$count" ]; then ok; else
        fail "$pg: $n problem line(s), expected $count:"
        grep -F "docs-check: $pg: " "$TMP/err" | sed 's/^/    /' >&2
    fi
    for t in "$@"; do
        if grep -F "docs-check: $pg: " "$TMP/err" | grep -qF -- "$t"; then
            ok
        else
            fail "$pg: no line with '$t'"
        fi
    done
}
expect ok.html 0
expect link.html 1 \
    'broken link "missing page" -> nope.html: no file nope.html'
expect anchor.html 2 \
    'broken link "bad anchor" -> ok.html#nowhere: ok.html has no anchor' \
    'broken link "bad local anchor" -> #here: anchor.html has no anchor #here'
expect outside.html 1 \
    'broken link "outside" -> ../outside.txt: points out of the site'
expect folder.html 1 'broken link "the figures" -> figures/:' \
    'figures/ is a folder without index.html'
expect image.html 2 'image figures/gone.svg did not load under "Figures"' \
    "request failed: $B/figures/gone.svg (net::ERR_FILE_NOT_FOUND)"
expect figure.html 1 'a figure has no image (caption "A lonely caption")'
expect code.html 1 \
    'empty code block (chapters/ch1_data/vocab.c encode) under "The encoder"'
expect code-plain.html 1 'empty code block'
expect math-empty.html 1 'empty math element y_1'
expect math-zero.html 1 'math not rendered (drawn '
expect math-error.html 1 'math error: bad TeX'
expect math-tex.html 1 'math not rendered, shown as TeX: \(\frac{a}{b}\)'
expect console.html 1 'console error: something broke'
expect exception.html 1 "uncaught exception: TypeError: Cannot read \
properties of null (reading 'f')"
expect network.html 1 'request failed: https://example.com/x.css' \
    '(a request to the network; the site must work offline)'
expect css.html 1 "request failed: $B/missing.css (net::ERR_FILE_NOT_FOUND)"
expect table.html 1 'table 1 (./ch1 a long text that must wrap in a...): column 2 wraps its text while the others leave'
expect flag.html 1 'inline code "--checkpoint" is broken after its dashes'
expect labels.html 1 'figure figures/tiny.svg: labels drawn 6.0 px high beside 16 px text (at least 12.0 px)'
expect wide.html 1 'table 1 (a row of text far wider than any phon...) is' \
    'px fit on a 390 px screen: its last columns are cut off'
# 22 problems, in every page but ok.html
n=$(find "$B" -name '*.html' | wc -l)
summary="docs-check: FAILED: 22 problem(s) in $((n - 1)) of $n page(s)"
if sed -E 's/ \([0-9.]+ s\)$//' "$TMP/err" | grep -qxF "$summary"; then
    ok
else
    fail "the broken site: no summary line '$summary'"
fi
if [ $failed -gt 0 ]; then
    echo "  what docs-check said about the broken site:" >&2
    sed 's/^/    /' "$TMP/err" >&2
fi

# ---- the same through the real pipeline: docs/build.sh renders a tiny
# book (a README, one chapter). An empty region stops the build itself
# (include.lua); without it the book builds, and its formula that pandoc
# leaves as TeX (with a warning) is for docs-check to find. A listing
# whose code or link no longer matches its source stops the build too,
# with a line that names the chapter, the listing and what differs, and
# so does include.lua on its own.
R=$TMP/book
mkdir -p "$R/chapters/ch1_x" "$R/docs"
printf '# Tiny\n\nSee [chapter 1](chapters/ch1_x/ch1.md).\n' >"$R/README.md"
printf '%s\n' 'int a;' '//> empty' '//< empty' '//> full' 'int b;' \
    '//< full' >"$R/chapters/ch1_x/x.c"
tiny_book() {   # the chapter, with the empty region included or not
    # shellcheck disable=SC2016  # $x^2$ is TeX for pandoc, not a variable
    printf '%s\n' '# Chapter 1: X' '' '## Code' '' "$@" \
        '```{.c include="chapters/ch1_x/x.c" region="full"}' '```' '' \
        'Math: $x^2$, and one pandoc cannot convert: $\begin{x}$.' \
        >"$R/chapters/ch1_x/ch1.md"
    # the code and the links, as make listings writes them
    DOCS_ROOT=$R bash "$ROOT/docs/code_listings.sh" --write >/dev/null 2>&1
}
: >"$R/docs/regions-unused.txt"
tiny_book '```{.c include="chapters/ch1_x/x.c" region="empty"}' '```' ''
if DOCS_ROOT=$R bash "$ROOT/docs/build.sh" >"$TMP/out" 2>&1; then
    fail "docs/build.sh rendered a chapter that shows an empty region"
elif grep -qF "region 'empty' has no lines to show" "$TMP/out"; then ok
else
    fail "docs/build.sh refused the empty region without saying so:"
    sed 's/^/    /' "$TMP/out" >&2
fi
echo "chapters/ch1_x/x.c empty" >>"$R/docs/regions-unused.txt"
tiny_book
# shellcheck disable=SC2016  # backquotes in Markdown, not commands
if ! grep -qxF '[`chapters/ch1_x/x.c`, line 5](x.c#L5) · region `full`' \
        "$R/chapters/ch1_x/ch1.md" \
   || ! grep -qxF 'int b;' "$R/chapters/ch1_x/ch1.md"; then
    fail "docs/code_listings.sh --write did not write the listing:"
    sed 's/^/    /' "$R/chapters/ch1_x/ch1.md" >&2
fi
if ! DOCS_ROOT=$R bash "$ROOT/docs/build.sh" >"$TMP/out" 2>&1; then
    fail "docs/build.sh could not render the tiny book:"
    sed 's/^/    /' "$TMP/out" >&2
else
    "${CHECK[@]}" "$R/docs/site" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    if [ $rc = 1 ]; then ok; else
        fail "the tiny book: exit status $rc, expected 1"
    fi
    expect index.html 0
    expect ch1.html 1 \
        'math not rendered, shown as TeX: $\begin{x}$ under "Code"'
    expect book.html 1 'math not rendered, shown as TeX: $\begin{x}$'
    # stale listings: refuse SOURCE TEXT: with the source changed to
    # SOURCE (lines), the build fails with a line that has TEXT, and so
    # does include.lua alone
    refuse() {
        local text=$1
        shift
        printf '%s\n' "$@" >"$R/chapters/ch1_x/x.c"
        if DOCS_ROOT=$R bash "$ROOT/docs/build.sh" >"$TMP/out" 2>&1; then
            fail "docs/build.sh rendered a listing that is not its source's"
        elif grep -F "chapters/ch1_x/ch1.md" "$TMP/out" |
                grep -F "region 'full'" | grep -qF -- "$text"; then ok
        else
            fail "docs/build.sh refused a stale listing without saying '$text':"
            sed 's/^/    /' "$TMP/out" >&2
        fi
        if (cd "$R" && pandoc --lua-filter "$ROOT/docs/include.lua" \
                chapters/ch1_x/ch1.md -o /dev/null) >"$TMP/out" 2>&1; then
            fail "include.lua took a listing that is not its source's"
        elif grep -F "include.lua: error: chapters/ch1_x/ch1.md" "$TMP/out" |
                grep -qF "region 'full'"; then ok
        else
            fail "include.lua refused a stale listing without naming it:"
            sed 's/^/    /' "$TMP/out" >&2
        fi
    }
    refuse 'its line 1 differs' 'int a;' '//> empty' '//< empty' \
        '//> full' 'int c;' '//< full'
    refuse 'its link reads line 5, the region is line 6 now' \
        'int a;' '' '//> empty' '//< empty' '//> full' 'int b;' '//< full'
    refuse 'it shows 1 line of code, the region has 2' 'int a;' '//> empty' \
        '//< empty' '//> full' 'int b;' 'int d;' '//< full'
    printf '%s\n' 'int a;' '//> empty' '//< empty' '//> full' 'int b;' \
        '//< full' >"$R/chapters/ch1_x/x.c"
    # the captions link to the source files, which must be there
    rm "$R/chapters/ch1_x/x.c"
    "${CHECK[@]}" "$R/docs/site" >"$TMP/out" 2>"$TMP/err"
    expect ch1.html 2 '-> ../../chapters/ch1_x/x.c: no file chapters/ch1_x/x.c in the repository'
fi

# ---- usage errors: exit status 2 and one line
usage() {
    local want=$1 text=$2
    shift 2
    "$@" >"$TMP/out" 2>"$TMP/err"
    local rc=$?
    if [ $rc = "$want" ] && [ "$(wc -l <"$TMP/err")" = 1 ] &&
       grep -qF -- "$text" "$TMP/err"; then
        ok
    else
        fail "$*: exit status $rc (expected $want), stderr:"
        sed 's/^/    /' "$TMP/err" >&2
    fi
}
usage 2 "no site folder $TMP/none (run make docs)" "${CHECK[@]}" "$TMP/none"
mkdir -p "$TMP/empty"
usage 2 "no .html pages in $TMP/empty" "${CHECK[@]}" "$TMP/empty"
usage 2 "/nonexistent/chromium not found" \
    env CHROMIUM=/nonexistent/chromium "${CHECK[@]}" "$G"
usage 2 "unrecognized arguments: --bogus" "${CHECK[@]}" --bogus

echo "docs_check_test: $passed passed, $failed failed"
[ $failed = 0 ]
