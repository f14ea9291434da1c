#!/usr/bin/env bash
# docs/build.sh -- render the book's markdown into a static HTML site.
#
# Usage (from the repository root):   bash docs/build.sh
#
#   README.md                     -> docs/site/index.html
#   chapters/chN_*/chN.md         -> docs/site/chN.html     (one per chapter)
#   all chapters, in order        -> docs/site/book.html    (single page)
#
# Every page is one pandoc call using docs/template.html (with its partial
# docs/prevnext.html), docs/style.css and the Lua filter docs/include.lua
# (code inclusion + link rewriting). Math is MathML (pandoc --mathml),
# which browsers draw themselves: no script, no web font, no network.
#
# Each chapter page has its table of contents (its sections and subsections) in
# a sidebar on a wide screen and in a box at the top on a narrow one,
# and links to the previous and next chapter and to the index at its top
# and bottom; book.html has one table of contents for the whole book.
#
# Each block of code included from a source region has a caption such as
# "chapters/ch2_attention/attention.c, lines 13–29" that links to the
# file. The link is relative: ../../chapters/ch2_attention/attention.c,
# i.e. the file in the repository checkout that docs/site/ was built in
# (set DOCS_SRC_BASE to link elsewhere). After rendering,
# docs/check_listings.lua reads every page back and fails the build if a
# caption's lines are not exactly the code shown.
# Before rendering, docs/check_regions.sh checks that every region marked
# in the sources (//> name ... //< name) is included by some chapter,
# docs/code_listings.sh that the code written into each listing of the
# Markdown (and the link above it) is its region's as the source is now,
# and docs/exercise_tables.sh that each chapter's table of exercises
# names the tests the grader runs.
# Works offline; needs only pandoc (>= 2.11; Debian 12 ships 2.17). The
# figures (docs/site/figures/*.svg) are drawn before, by make figures
# (gnuplot); a page that shows one that is missing fails the build.
#
# Environment:
#   DOCS_ROOT   repository root to render (default: .).  The template,
#               style sheet and filter always come from this script's own
#               folder, the content and the output from $DOCS_ROOT.
#   PANDOC      pandoc executable to use (default: pandoc)
#   DOCS_SRC_BASE  what the captions' links put before a source file's
#               path (default: ../../, the repository seen from
#               docs/site/). An http(s) URL such as
#               https://github.com/OWNER/REPO/blob/main/ also gets the
#               lines as "#L13-L29", which GitHub highlights.
set -euo pipefail

die() { echo "build.sh: error: $*" >&2; exit 1; }

# Where template.html, style.css and include.lua live (absolute path,
# taken before we change directory).
SELF=${BASH_SOURCE[0]}
if [[ $SELF == */* ]]; then DOCS_DIR=${SELF%/*}; else DOCS_DIR=.; fi
DOCS_DIR=$(cd "$DOCS_DIR" && pwd)
ROOT=${DOCS_ROOT:-.}
PANDOC=${PANDOC:-pandoc}

command -v "$PANDOC" >/dev/null 2>&1 ||
  die "pandoc not found (looked for '$PANDOC'); install it, e.g. 'apt-get install pandoc'"
for f in template.html prevnext.html style.css include.lua check_listings.lua \
         check_regions.sh code_listings.sh exercise_tables.sh; do
  [[ -f $DOCS_DIR/$f ]] || die "missing $DOCS_DIR/$f"
done
[[ -d $ROOT ]] || die "DOCS_ROOT '$ROOT' is not a directory"
cd "$ROOT"
[[ -f README.md ]] || die "no README.md in $(pwd) (run from the repository root or set DOCS_ROOT)"

# Every marked region must be shown somewhere (include.lua checks the
# other direction: every included region must exist).
DOCS_ROOT=. bash "$DOCS_DIR/check_regions.sh" ||
  die "unused regions (above): include each in a chapter, remove its markers, or list it in docs/regions-unused.txt"

# The Markdown holds each listing's code and a link to its lines, for a
# reader without the site: they must be the sources' as they are now
# (make listings writes them; include.lua checks them again as it
# renders). Each table of exercises must be what the grader runs (make
# exercise-tables writes them).
DOCS_ROOT=. bash "$DOCS_DIR/code_listings.sh" ||
  die "listings that differ from their sources (above): run make listings"
DOCS_ROOT=. bash "$DOCS_DIR/exercise_tables.sh" ||
  die "tables of exercises that differ from the grader (above): run make exercise-tables"

# What a student reads names its sources by title or as "the course
# notes", never by a file number ("seed 001"), and never mentions the
# project's issue tracker.
bad=$(grep -rnEi --include='*.md' --include='*.c' --include='*.h' \
      'seeds? +0[0-9]{2}([^0-9]|$)|the seeds\b|the issue|issue [0-9]+' README.md chapters \
      common exercises solutions 2>/dev/null || true)
[[ -z $bad ]] || { echo "$bad" >&2;
  die "the lines above cite a source by file number or mention an issue"; }

OUT=docs/site
# How output paths are shown in the log: relative to where we were started.
if [[ $ROOT == . ]]; then SHOW=$OUT; else SHOW=${ROOT%/}/$OUT; fi

# ---------------------------------------------------------------- chapters
# Find chapters/chN_<name>/chN.md and sort them by N (numerically, so
# ch10 would come after ch9).
shopt -s nullglob
declare -A CH_FILE=()
for f in chapters/ch*_*/ch*.md; do
  [[ $f =~ ^chapters/ch([0-9]+)_[^/]*/ch([0-9]+)\.md$ ]] || continue
  [[ ${BASH_REMATCH[1]} == "${BASH_REMATCH[2]}" ]] || continue
  n=$((10#${BASH_REMATCH[1]}))
  [[ -z ${CH_FILE[$n]:-} ]] ||
    die "two files for chapter $n: ${CH_FILE[$n]} and $f"
  CH_FILE[$n]=$f
done
NUMS=()
if ((${#CH_FILE[@]})); then
  mapfile -t NUMS < <(printf '%s\n' "${!CH_FILE[@]}" | sort -n)
fi

# Title of a markdown file: `title:` of its YAML header, else its first
# level-1 "# heading" (outside code fences), without {#id .class} and a
# leading "Chapter N:" (the site adds "Ch N" itself).
md_title() {
  awk '
    NR == 1 && /^---[ \t]*$/ { yaml = 1; next }
    yaml {
      if (/^(---|\.\.\.)[ \t]*$/) { yaml = 0; next }
      if (sub(/^title:[ \t]*/, "")) {
        gsub(/^["'\'']|["'\'']$/, ""); print; exit
      }
      next
    }
    /^[ \t]*(```|~~~)/ { fence = !fence; next }
    !fence && /^# / {
      sub(/^# +/, ""); sub(/[ \t]*\{[^}]*\}[ \t]*$/, ""); sub(/[ \t#]+$/, "")
      print; exit
    }' "$1" |
    sed -E 's/^(Chapter|Ch\.?)[[:space:]]+[0-9]+[[:space:]]*[:.–—-][[:space:]]*//'
}

# Text for a YAML single-quoted string (quotes are doubled).
yq() { printf "'%s'" "${1//\'/\'\'}"; }

# Markdown -> literal text: drop ` and *, then backslash-escape every
# ASCII punctuation character so pandoc reads it back verbatim (used
# where HTML markup must not appear, e.g. in title="..." and <title>).
plain() {
  local s=${1//\`/}
  s=${s//\*/}
  # shellcheck disable=SC2001  # sed is clearer than bash here
  sed -E 's/([][!"#$%&'\''()*+,./:;<=>?@\\^_`{|}~-])/\\\1/g' <<<"$s"
}

declare -A CH_TITLE=()
for n in "${NUMS[@]}"; do
  t=$(md_title "${CH_FILE[$n]}")
  CH_TITLE[$n]=${t:-Chapter $n}
done
SITE_TITLE=$(md_title README.md)
SITE_TITLE=${SITE_TITLE:-Transformer from scratch in C}

# ------------------------------------------------------------ page metadata
# Each page gets a small YAML file of variables for docs/template.html:
# the chapter list for the nav bar, and prev/next links.
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# write_meta PAGE  -- PAGE is "index", "book" or a chapter number.
write_meta() {
  local page=$1 i n
  {
    echo "site-title: $(yq "$(plain "$SITE_TITLE")")"
    case $page in
      index) echo "site-page: index"; echo "site-home: true"
             echo "pagetitle: 'Home'" ;;
      book)  echo "site-page: book"; echo "site-book: true"
             echo "pagetitle: 'All chapters'" ;;
      *)     echo "site-page: ch$page"; echo "site-chapter: true"
             echo "pagetitle: $(yq "Ch $page: $(plain "${CH_TITLE[$page]}")")" ;;
    esac
    echo "site-chapters:"
    for n in "${NUMS[@]}"; do
      echo "  - num: '$n'"
      echo "    href: 'ch$n.html'"
      echo "    title: $(yq "${CH_TITLE[$n]}")"
      echo "    plain: $(yq "$(plain "${CH_TITLE[$n]}")")"
      if [[ $page == "$n" ]]; then echo "    current: true"; fi
    done
    # previous / next chapter (chapter pages only)
    if [[ $page =~ ^[0-9]+$ ]]; then
      for i in "${!NUMS[@]}"; do
        [[ ${NUMS[$i]} == "$page" ]] || continue
        if ((i > 0)); then
          n=${NUMS[$((i - 1))]}
          echo "site-prev: {num: '$n', href: 'ch$n.html', title: $(yq "${CH_TITLE[$n]}")}"
        fi
        if ((i + 1 < ${#NUMS[@]})); then
          n=${NUMS[$((i + 1))]}
          echo "site-next: {num: '$n', href: 'ch$n.html', title: $(yq "${CH_TITLE[$n]}")}"
        fi
      done
    fi
  } >"$TMP/$page.yaml"
}

# ------------------------------------------------------------------ render
COMMON=(
  --from markdown --to html5 --standalone --wrap=none
  --template "$DOCS_DIR/template.html"
  --css style.css
  --mathml
  --highlight-style tango
  --lua-filter "$DOCS_DIR/include.lua"
  --resource-path=.
)

mkdir -p "$OUT"
rm -f "$OUT"/*.html          # no stale pages from renamed chapters
cp "$DOCS_DIR/style.css" "$OUT/style.css"
# Figures: make figures draws docs/site/figures/*.svg from the programs'
# output first; any other file under docs/figures/ is copied as it is
# (not the gnuplot scripts that draw them).
if [[ -d docs/figures ]]; then
  mkdir -p "$OUT/figures"
  (cd docs/figures && find . -type f ! -name '*.gp' -print0 |
     xargs -0 -r cp --parents -t "../../$OUT/figures/")
fi

FAILED=()
# render OUTPUT_NAME META_PAGE [pandoc options...] INPUT...
render() {
  local name=$1 page=$2
  shift 2
  write_meta "$page"
  if "$PANDOC" "${COMMON[@]}" --metadata-file "$TMP/$page.yaml" \
      -o "$OUT/$name" "$@"; then
    echo "wrote $SHOW/$name"
  else
    rm -f "$OUT/$name"
    echo "build.sh: error: pandoc failed for $SHOW/$name (see message above)" >&2
    FAILED+=("$name")
  fi
}

render index.html index README.md
for n in "${NUMS[@]}"; do
  render "ch$n.html" "$n" --toc --toc-depth=3 "${CH_FILE[$n]}"
done
if ((${#NUMS[@]})); then
  CH_FILES=()
  for n in "${NUMS[@]}"; do CH_FILES+=("${CH_FILE[$n]}"); done
  # --file-scope: footnotes and link references stay local to their chapter
  render book.html book --toc --toc-depth=2 --file-scope \
    --metadata title="$SITE_TITLE" "${CH_FILES[@]}"
else
  echo "build.sh: warning: no chapters/chN_*/chN.md found; skipping book.html" >&2
fi

if ((${#FAILED[@]})); then
  die "${#FAILED[@]} page(s) failed: ${FAILED[*]}"
fi

# A figure's caption quotes the command that made its data ("Data:
# `./chN ...`"); make figures keeps the commands it ran in
# build/figures-data/*.cmd. A caption whose command is not one of them
# describes data the figure was not drawn from.
if compgen -G 'build/figures-data/*.cmd' >/dev/null; then
  for n in "${NUMS[@]}"; do
    while IFS= read -r cmd; do
      grep -qxF -- "$cmd" build/figures-data/*.cmd ||
        die "${CH_FILE[$n]}: a figure's caption quotes '$cmd', which make figures does not run (see the Makefile's figures rule)"
    done < <(tr '\n' ' ' <"${CH_FILE[$n]}" |
             grep -oE 'Data: `\./ch[0-9]+ [^`]*`' |
             sed -E 's/^Data: `//; s/`$//; s/ +/ /g')
  done
fi

# Every code caption must name the lines it shows (see the top of
# docs/check_listings.lua); this reads the pages back, so it checks what
# a reader sees, not what include.lua meant to write.
for page in "$OUT"/*.html; do
  "$PANDOC" --quiet -f html -t native -o /dev/null \
      --lua-filter "$DOCS_DIR/check_listings.lua" "$page" ||
    die "$page: code captions that do not match their files (above)"
done

# Every image a page shows must be in the site (include.lua already
# refuses a missing figure; this also catches one removed meanwhile).
missing=()
while IFS= read -r src; do
  [[ -f $OUT/$src ]] || missing+=("$src")
done < <(grep -ohE '<img [^>]*src="[^":#]+"' "$OUT"/*.html |
         sed -E 's/.*src="([^"]*)"/\1/' | sort -u)
((${#missing[@]} == 0)) ||
  die "the pages show images that are not in $SHOW: ${missing[*]}"
echo "done: $((${#NUMS[@]} + 1 + (${#NUMS[@]} > 0))) page(s) in $SHOW"
