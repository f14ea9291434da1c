#!/usr/bin/env bash
# setup.sh - Gradescope runs this once, as root, when it builds the
# autograder's image from build/gradescope/autograder.zip (made by `make
# gradescope`), in /autograder/source, where the zip was unpacked. It
# installs the Debian packages the build and the tests need, then builds
# everything by grading the stubs of exercises/ once: each submission then
# compiles only its own files (run_autograder). The image has no data/
# to fetch: the one data set the exercises' tests read (Tiny Shakespeare,
# for chapter 1) is in the zip.
set -euo pipefail
cd "$(dirname "$0")"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends build-essential make \
    pkg-config libopenblas-dev libopenblas-openmp-dev check
# anything the build asks for that the list above lacks
bash common/deps.sh check

flags=${AUTOGRADER_MAKE_FLAGS-PORTABLE=1 NO_INSTALL=1}
# shellcheck disable=SC2086   # the flags are words
make --no-print-directory grade EXERCISES=exercises \
    GRADE_OUT=build/autograder/grade $flags
if ! grep -q '^  "score": 0,$' build/autograder/grade/results.json; then
    echo "error: grading the stubs gave no report of 0 points: the" \
         "autograder does not work (see above)" >&2
    exit 1
fi
echo "setup: the autograder is ready"
