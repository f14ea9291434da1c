#!/usr/bin/env bash
# bench.sh - ./ch6 against PyTorch on this machine: throughput of configs
# A, B, C, FLOPs utilisation against a measured SGEMM peak, and the time to
# val 1.886 with the B recipe. The work is in bench.py beside this file;
# `bash tests/bench/bench.sh --help` lists the options, --quick is a smoke
# test. Needs python3; PyTorch for the PyTorch side (pip install torch).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
py="${PYTHON:-python3}"
command -v "$py" >/dev/null 2>&1 || {
    echo "bench: error: $py not found (set PYTHON=/path/to/python3)" >&2
    exit 1
}
exec "$py" "$here/bench.py" "$@"
