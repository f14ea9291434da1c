#!/usr/bin/env bash
# load.sh - ./ch6 and ./ch7 beside 0, 1 and 2 busy processes, with the
# default threads (timed as the run goes), 1 and 2, and PyTorch with 1 and
# 2 when PYTHON names a Python with torch. The work is in load.py beside
# this file; `bash tests/bench/load.sh --help` lists the options, --quick
# is a smoke test.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec python3 "$here/load.py" "$@"
