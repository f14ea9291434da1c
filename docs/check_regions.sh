#!/usr/bin/env bash
# docs/check_regions.sh -- fail when a marked region is never shown.
#
# Usage (from the repository root):   bash docs/check_regions.sh
#
# A region is the code between `//> name` and `//< name` in a source
# file (.c, .h, and chapter 8's CUDA: .cu, .cuh, .cpp) under chapters/,
# common/, exercises/ or solutions/. The book
# shows a region with a fenced block in a chapter text
# (chapters/chN_*/chN.md) or README.md, which holds the region's code
# (written by docs/code_listings.sh, make listings):
#
#     ```{.c include="path" region="name"}
#     ...
#     ```
#
# docs/include.lua already stops the build when such a block names a
# region that does not exist. This script checks the other direction:
# every marked region must be included somewhere, so no marker is left
# over from a passage that was cut or never written. It prints one line
# per unused region and exits with status 1.
#
# What counts as included:
#   - a block with include="path" region="name" includes that region;
#   - a block with include="path" and no region shows the whole file, so
#     it includes every region of that file;
#   - a region nested inside an included region is NOT included by that:
#     its markers only make sense if some chapter names it, so it must be
#     named itself (or its markers removed).
#
# docs/regions-unused.txt lists regions that may stay unused for now, one
# "path region" per line ('#' starts a comment). A listed region that is
# in fact included, or that no longer exists, is an error too, so the
# list only ever shrinks. REGIONS_ALLOW=FILE reads another list instead.
set -euo pipefail

ROOT=${DOCS_ROOT:-.}
cd "$ROOT"
ALLOW=${REGIONS_ALLOW:-docs/regions-unused.txt}

shopt -s nullglob globstar
SOURCES=()
for d in chapters common exercises solutions; do
  for f in "$d"/**/*.[ch] "$d"/**/*.cu "$d"/**/*.cuh "$d"/**/*.cpp; do
    SOURCES+=("$f")
  done
done
TEXTS=(README.md chapters/ch*_*/ch*.md)
[[ -f $ALLOW ]] || ALLOW=/dev/null

# The allow-list's lines are "path region" or blank.
awk '{ sub(/#.*/, "") } NF != 0 && NF != 2 {
       printf "%s:%d: expected \"path region\"\n", FILENAME, FNR; bad = 1
     }
     END { exit bad }' "$ALLOW" >&2 || exit 1

# Input, as three kinds of lines fed to one awk program:
#   A path region     an allow-list entry          (from $ALLOW)
#   I path region     an include ("*": whole file) (from the texts)
#   R path region     a marked region              (from the sources)
{
  awk '{ sub(/#.*/, "") } NF == 2 { print "A", $1, $2 }' "$ALLOW"
  # Only fenced blocks: a line that opens a fence with {... include=...}.
  awk '/^[ \t]*(```|~~~)[ \t]*\{.*include="/ {
         path = $0; sub(/.*include="/, "", path); sub(/".*/, "", path)
         region = ""
         if ($0 ~ /region="/) {
           region = $0; sub(/.*region="/, "", region); sub(/".*/, "", region)
         }
         print "I", path, (region == "" ? "*" : region)
       }' "${TEXTS[@]}"
  awk '/^[ \t]*\/\/>/ {
         s = $0; sub(/^[ \t]*\/\/>[ \t]*/, "", s); split(s, w, /[ \t]+/)
         if (w[1] != "") print "R", FILENAME, w[1]
       }' "${SOURCES[@]}"
} | awk -v allow="$ALLOW" '
  $1 == "A" { allowed[$2 " " $3] = 1; next }
  $1 == "I" { used[$2 " " $3] = 1; next }
  $1 == "R" { n++; path[n] = $2; name[n] = $3; exists[$2 " " $3] = 1 }
  END {
    status = 0
    for (i = 1; i <= n; i++) {
      key = path[i] " " name[i]
      if (key in used || (path[i] " *") in used) {
        if (key in allowed) {
          printf "%s: region '\''%s'\'' is included now: delete it from %s\n",
                 path[i], name[i], allow
          status = 1
        }
      } else if (!(key in allowed)) {
        printf "%s: region '\''%s'\'' is marked but no chapter includes it\n",
               path[i], name[i]
        status = 1
      }
    }
    for (key in allowed) if (!(key in exists)) {
      split(key, k, " ")
      printf "%s: region '\''%s'\'' does not exist: delete it from %s\n",
             k[1], k[2], allow
      status = 1
    }
    exit status
  }'
