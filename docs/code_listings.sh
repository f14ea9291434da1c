#!/usr/bin/env bash
# docs/code_listings.sh -- the code that the chapters show, written into
# their Markdown and kept equal to the sources.
#
# Usage (from the repository root):
#   bash docs/code_listings.sh [FILE.md...]          check (make check,
#                                                     docs/build.sh)
#   bash docs/code_listings.sh --write [FILE.md...]  rewrite (make listings)
# FILE.md: the texts to look at (default: README.md and every
# chapters/chN_*/chN.md).
#
# A chapter shows a region of a source file (the lines between
# `//> name` and `//< name`) as a fenced block with an include= attribute,
# the region's code written inside it, and above it a line that links to
# the region's lines (a code host such as GitHub shows them highlighted):
#
#     [`chapters/ch1_data/vocab.c`, lines 40–72](vocab.c#L40-L72) · region `vocab-build`
#
#     ```{.c include="chapters/ch1_data/vocab.c" region="vocab-build"}
#     ...the lines of the region, less the indentation they share...
#     ```
#
# so that the Markdown alone, read in an editor or on a code host, shows
# the code, and the rendered site shows the same. The link is relative to
# the text's own folder. The code is what docs/include.lua would put
# there: the region's lines less any marker lines, without blank lines at
# either end, dedented (blank lines empty); the range is that of its
# first and last lines, as in the site's caption. A block in a list item
# is indented like the item, and so are its lines and its link.
#
# --write rewrites every such block and link from the sources as they are
# now (adding the link where it is missing) and leaves the rest of each
# text alone, byte for byte; a text it does not change keeps its time
# stamp. Without --write it changes nothing and prints one line per
# listing whose code or link is not what --write would write (the text
# and line, the region, what differs), then exits with status 1. A
# missing file or region, a region opened twice or never closed, fails
# both ways. docs/include.lua checks the same again while it renders.
set -euo pipefail

WRITE=0
if [[ ${1:-} == --write ]]; then WRITE=1; shift; fi
if [[ ${1:-} == -* ]]; then
  echo "usage: bash docs/code_listings.sh [--write] [FILE.md...]" >&2
  exit 2
fi
cd "${DOCS_ROOT:-.}"
shopt -s nullglob
if (($#)); then TEXTS=("$@"); else
  TEXTS=(chapters/ch*_*/ch*.md)
  [[ -f README.md ]] && TEXTS=(README.md "${TEXTS[@]}")
fi

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

status=0 stale=0 total=0
for md in "${TEXTS[@]}"; do
  [[ -f $md ]] || { echo "code_listings.sh: $md: no such file" >&2; exit 1; }
  set +e
  awk -v md="$md" -v write="$WRITE" -v out="$TMP/new" -v counts="$TMP/n" '
  function fail(msg) { printf "%s\n", msg > "/dev/stderr"; bad = 1 }
  # the lines of a source file, read once: S[path, i], NS[path]
  function load(path,   n, l) {
    if (path in NS) return NS[path] >= 0
    n = 0
    while ((getline l < path) > 0) { sub(/\r$/, "", l); S[path, ++n] = l }
    close(path)
    NS[path] = n > 0 ? n : -1
    return n > 0
  }
  # a region marker: sets MK (">" or "<") and MN (its name); 0 if none
  function marker(l,   rest) {
    if (!match(l, /^[ \t]*\/\/[<>]/)) return 0
    MK = substr(l, RLENGTH, 1)
    rest = substr(l, RLENGTH + 1)
    sub(/^[ \t]+/, "", rest); sub(/[ \t].*$/, "", rest)
    MN = rest
    return 1
  }
  function blank(l) { return l !~ /[^ \t]/ }
  # what include.lua shows for path, region: C[1..NC], and the first and
  # last line numbers LO, HI. Returns "" or what is wrong.
  function extract(path, region,   n, i, first, last, op, cl, k, L,
                   AT, s, e, common, ind) {
    if (!load(path)) return "cannot read " path " (or it is empty)"
    n = NS[path]; first = 1; last = n
    if (region != "") {
      op = cl = 0
      for (i = 1; i <= n; i++) {
        if (!marker(S[path, i])) continue
        if (MN == "") return path ":" i ": a region marker without a name"
        if (MN != region) continue
        if (MK == ">") {
          if (op) return path ":" i ": region \047" region "\047 is opened twice"
          op = i
        } else {
          if (cl) return path ":" i ": region \047" region "\047 is closed twice"
          cl = i
        }
      }
      if (!op)
        return "no region \047" region "\047 in " path " (no line \047//> " region "\047)"
      if (!cl || cl < op)
        return path ":" op ": region \047" region "\047 is never closed"
      first = op + 1; last = cl - 1
    }
    k = 0
    for (i = first; i <= last; i++)
      if (!marker(S[path, i])) { L[++k] = S[path, i]; AT[k] = i }
    s = 1; e = k
    while (s <= e && blank(L[s])) s++
    while (e >= s && blank(L[e])) e--
    if (s > e) return path ": region \047" region "\047 has no lines to show"
    common = "-"
    for (i = s; i <= e; i++) {
      if (blank(L[i])) continue
      match(L[i], /^[ \t]*/); ind = substr(L[i], 1, RLENGTH)
      if (common == "-") common = ind
      while (substr(ind, 1, length(common)) != common)
        common = substr(common, 1, length(common) - 1)
    }
    NC = 0
    for (i = s; i <= e; i++) {
      C[++NC] = blank(L[i]) ? "" : substr(L[i], length(common) + 1)
      CAT[NC] = AT[i]
      if (C[NC] ~ /^[ \t]*(```|~~~)/)
        return path ":" AT[i] ": a line that would end the Markdown code block"
    }
    LO = AT[s]; HI = AT[e]
    return ""
  }
  function attr(l, name,   v) {
    if (!match(l, name "=\"[^\"]*\"")) return ""
    v = substr(l, RSTART + length(name) + 2, RLENGTH - length(name) - 3)
    return v
  }
  # the link above a listing, as --write writes it
  function link_line(ind, path, region,   rel, range, anchor) {
    rel = index(path, DIR) == 1 ? substr(path, length(DIR) + 1) : UP path
    range = LO == HI ? "line " LO : "lines " LO EN HI
    anchor = "#L" LO (LO == HI ? "" : "-L" HI)
    return ind "[`" path "`, " range "](" rel anchor ")" \
           (region == "" ? "" : " " DOT " region `" region "`")
  }
  function is_link(l) { return l ~ /^[ \t]*\[`[^`]+`, lines? [0-9]/ }
  function emit(l) { O[++NO] = l }

  BEGIN { EN = "\342\200\223"; DOT = "\302\267" }
  { T[NR] = $0 }
  END {
    # the folder of the text, and the way up from it to the root
    DIR = md; UP = ""
    if (DIR ~ /\//) { sub(/[^\/]*$/, "", DIR) } else DIR = "\001"
    n = split(md, parts, "/")
    for (i = 1; i < n; i++) UP = UP "../"
    i = 1
    while (i <= NR) {
      l = T[i]
      if (!match(l, /^[ \t]*(```+|~~~+)/)) { emit(l); i++; continue }
      # a fenced block: where it ends
      match(l, /^[ \t]*/); ind = substr(l, 1, RLENGTH)
      f = substr(l, RLENGTH + 1); ch = substr(f, 1, 1)
      match(f, ch == "`" ? "^`+" : "^~+"); flen = RLENGTH
      close_re = ch == "`" ? "^`+$" : "^~+$"
      for (j = i + 1; j <= NR; j++) {
        c = T[j]; sub(/^[ \t]+/, "", c); sub(/[ \t]+$/, "", c)
        if (length(c) >= flen && c ~ close_re) break
      }
      if (j > NR) { fail(md ":" i ": a code block that is never closed"); exit 1 }
      if (l !~ /^[ \t]*(```+|~~~+)[ \t]*\{[^}]*include="/) {
        for (k = i; k <= j; k++) emit(T[k])
        i = j + 1; continue
      }
      total++
      path = attr(l, "include"); region = attr(l, "region")
      what = md ":" i ": the listing of " path \
             (region == "" ? "" : " region \047" region "\047")
      err = extract(path, region)
      if (err != "") { fail(what ": " err); emit(l); i++; continue }
      want = link_line(ind, path, region)
      # the link: the line before the blank line above the block
      have_link = NO >= 2 && blank(O[NO]) && is_link(O[NO - 1])
      problem = ""
      range = LO == HI ? "line " LO : "lines " LO EN HI
      if (!have_link) problem = "; no link to its lines above it"
      else if (O[NO - 1] != want) {
        have = O[NO - 1]
        if (match(have, "`, lines? [0-9]+(" EN "[0-9]+)?]") \
            && substr(have, RSTART + 3, RLENGTH - 4) != range)
          problem = "; its link reads " substr(have, RSTART + 3, RLENGTH - 4) \
                    ", the region is " range " now"
        else problem = "; its link should read " want
      }
      # the code: the lines between the fences, against the region
      nb = j - i - 1
      if (nb == 0) problem = problem "; it is empty"
      else if (nb != NC)
        problem = problem "; it shows " nb " line" (nb == 1 ? "" : "s") \
                  " of code, the region has " NC " (" range ")"
      else for (k = 1; k <= NC; k++) {
        w = C[k] == "" ? "" : ind C[k]
        if (T[i + k] != w) {
          problem = problem "; its line " k " differs from the source" \
                    "\047s line " CAT[k]
          break
        }
      }
      problem = substr(problem, 3)
      if (problem != "") {
        stale++
        if (!write) fail(what ": " problem "; run make listings")
      }
      # write it as it should be
      if (have_link) O[NO - 1] = want
      else {
        if (NO >= 1 && !blank(O[NO])) emit("")
        emit(want); emit("")
      }
      emit(l)
      for (k = 1; k <= NC; k++) emit(C[k] == "" ? "" : ind C[k])
      emit(T[j])
      i = j + 1
    }
    print total, stale > counts
    if (write && !bad) for (k = 1; k <= NO; k++) print O[k] > out
    exit bad
  }
  ' "$md"
  rc=$?
  set -e
  ((rc == 0)) || status=1
  t=0 s=0
  [[ -f $TMP/n ]] && read -r t s <"$TMP/n"
  total=$((total + t)); stale=$((stale + s))
  if ((WRITE && rc == 0)) && ! cmp -s "$TMP/new" "$md"; then
    # in place, keeping the file's mode; only when something changed
    cat "$TMP/new" >"$md"
    echo "code_listings.sh: rewrote $s of $t listing(s) in $md"
  fi
  rm -f "$TMP/new" "$TMP/n"
done
if ((WRITE)); then
  ((status == 0)) || { echo "code_listings.sh: errors above; texts with errors were left as they were" >&2; exit 1; }
  echo "code_listings.sh: $total listing(s), $stale rewritten"
elif ((stale || status)); then
  echo "code_listings.sh: $stale of $total listing(s) differ from their sources: run make listings" >&2
  exit 1
fi
