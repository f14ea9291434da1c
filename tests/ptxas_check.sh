#!/usr/bin/env bash
# ptxas_check.sh - chapter 8's kernels keep their working data in
# registers and shared memory, never in local memory:
#
#   bash tests/ptxas_check.sh "75 80 90" [FILE.cu ...]
#   bash tests/ptxas_check.sh "75 80 90" --all
#
# compiles each FILE (by default flash.cu and flash_tc.cu, the fused
# attention; --all: every .cu of chapters/ch8_cuda/, not its checks) for
# each compute capability of the list, with ptxas reporting what every
# function uses (-Xptxas -v), prints a line per kernel and fails if any
# function has a stack frame or spills registers. Either is local memory:
# per-thread memory in DRAM, behind the caches, that an array indexed at
# run time, or too many live values, sends a kernel's data to, a load and
# a store around what should be one instruction.
#
# Without nvcc it says so and succeeds: the emulated build has no ptxas.
# NVCC names the compiler (default nvcc), NVCCFLAGS adds flags.
set -u
ARCHS=${1:-}
[ -n "$ARCHS" ] || {
    echo "usage: $0 \"ARCH ...\" [--all | FILE.cu ...]" >&2
    exit 2
}
shift
NVCC=${NVCC:-nvcc}
if ! command -v "$NVCC" > /dev/null 2>&1; then
    echo "ptxas check: skipped, $NVCC not found (no GPU code to check)"
    exit 0
fi
D=chapters/ch8_cuda
if [ "${1:-}" = --all ]; then
    set -- "$D"/*.cu
elif [ $# = 0 ]; then
    set -- "$D/flash.cu" "$D/flash_tc.cu"
fi
INC=(-Icommon)
for c in chapters/ch*_*/; do INC+=("-I${c%/}"); done
GEN=()
for a in $ARCHS; do GEN+=(-gencode "arch=compute_$a,code=sm_$a"); done
demangle() { if command -v c++filt > /dev/null; then c++filt; else cat; fi; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
for f in "$@"; do
    log="$tmp/$(basename "$f").log"
    # shellcheck disable=SC2086
    if ! "$NVCC" -std=c++17 -O3 "${GEN[@]}" "${INC[@]}" -Xptxas -v \
            ${NVCCFLAGS:-} -c "$f" -o "$tmp/out.o" > "$log" 2>&1; then
        cat "$log"
        echo "FAIL $f: nvcc failed for compute capabilities $ARCHS"
        fails=$((fails + 1))
        continue
    fi
    # ptxas says, per function and architecture:
    #   Compiling entry function 'NAME' for 'sm_80'   (a kernel)
    #   Function properties for NAME
    #       S bytes stack frame, W bytes spill stores, R bytes spill loads
    #   Used N registers, ...
    # A device function that was not inlined gets the properties lines
    # alone, and is held to the same rule. A file that defines kernels
    # must show some: else the report's format changed, and the check
    # would pass on nothing.
    kernels=0
    grep -q "__global__" "$f" && kernels=1
    awk -v file="$(basename "$f")" -v kernels="$kernels" '
        /Compiling entry function/ {
            match($0, /for .sm_[0-9a-z]+/)
            arch = substr($0, RSTART + 5, RLENGTH - 5)
        }
        /Function properties for/ { name = $NF; props = 1; next }
        props && /bytes stack frame/ {
            props = 0
            bad = $1 + $5 + $9 > 0
            nbad += bad
            line[++n] = sprintf("%s %s %s: stack %d B, spills %d B " \
                                "stored, %d B loaded;", bad ? "FAIL" : "ok  ",
                                file, arch, $1, $5, $9)
            who[n] = name
        }
        /Used [0-9]+ registers/ && n {
            match($0, /Used [0-9]+/)
            regs[n] = " " substr($0, RSTART + 5, RLENGTH - 5) " registers;"
        }
        END {
            for (i = 1; i <= n; i++) print line[i] regs[i] " " who[i]
            if (!n && kernels) {
                print "FAIL " file ": no kernel in ptxas'"'"'s report"
                exit 1
            }
            exit nbad > 0
        }' "$log" > "$tmp/table" || fails=$((fails + 1))
    # (the names demangled, without their arguments)
    demangle < "$tmp/table" | sed 's/(.*$//'
done
if [ "$fails" != 0 ]; then
    echo "ptxas check: FAILED for compute capabilities $ARCHS: see the FAIL" \
         "lines above (a stack frame or spilled registers is local memory)"
    exit 1
fi
echo "ptxas check: no local memory in $# file(s)," \
     "for compute capabilities $ARCHS"
