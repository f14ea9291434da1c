#!/usr/bin/env bash
# lease.sh - chapter 8's measurements for one short loan of a GPU machine,
# in the order of their value, each under a time limit, so that a lease of
# about ten minutes brings back the most it can:
#
#   bash tests/bench/cuda/lease.sh [folder for the logs]   (default: $OUT,
#                                                            else build/lease)
#
#  1. the machine: GPU, driver, CPU, PyTorch;
#  2. ./ch5, ./ch6 and ./ch8 built for this GPU's compute capability, with
#     NO_BLAS=1 (such a machine has no OpenBLAS, and needs none: the CPU
#     side only checks);
#  3. ./ch8 --check: every kernel against the CPU, on the device (the
#     tensor-core attention, flash_tc.cu, has never run on one before);
#  4. bench_gpu.py at nanoGPT's shape: ./ch8 in fp32 and bf16 (with the
#     causal blocks, without, and fused on the tensor cores: --bf16
#     --flash), against PyTorch eager in both;
#  4b. the fused block against the plain one (--unfused), fp32 and bf16;
#     then, without dropout (which --graph needs), a step as one CUDA
#     graph against the same step launched kernel by kernel, and PyTorch
#     eager without dropout, the yardstick of those rows;
#  4c. the graph's losses and norms against the direct step's, 30 steps at
#     nanoGPT's shape without dropout: they must be the same bits;
#  5. the same at the GPT-2 shape (block 1,024), in bf16, (T, T) and
#     fused;
#  6. the attention kernel benchmark (attention_blocks.cu), v1 to v4, at
#     T = 256 and 1,024 (run third, after the check: the first timing of
#     the tensor-core attention);
#  7. gpu_check.sh without the sanitizers: losses against the CPU, run to
#     run, checkpoints across the two.
# Besides its own limit, every step gets no more than what is left of
# LEASE_SECONDS (default 540, nine minutes) since the start, and a step
# with under 20 s left is skipped: the whole stays under ten minutes
# whatever hangs.
# A step that fails or runs out of time is reported and the next one runs.
# Needs data/tinyshakespeare.txt (the machine has no network: carry it).
# The summary lines at the end are what the chapter's tables need.
set -u
D=${1:-${OUT:-build/lease}}
mkdir -p "$D"
T0=$(date +%s)
TOTAL=${LEASE_SECONDS:-540}
fails=0

# step NAME SECONDS CMD...: runs CMD under a time limit (SECONDS, or what
# is left of TOTAL if less), its output into $D/NAME.log, and says how it
# ended and how long it took.
step() {
    local name=$1 limit=$2 t=$SECONDS
    local left=$((TOTAL - ($(date +%s) - T0)))
    shift 2
    if [ "$left" -lt 20 ]; then
        echo "== $name: SKIPPED, $left s left of $TOTAL"
        fails=$((fails + 1))
        return 1
    fi
    [ "$left" -lt "$limit" ] && limit=$left
    echo "== $name (at $(($(date +%s) - T0)) s, limit $limit s)"
    timeout "$limit" "$@" >"$D/$name.log" 2>&1
    local rc=$?
    if [ "$rc" = 0 ]; then
        echo "   ok, $((SECONDS - t)) s"
    else
        fails=$((fails + 1))
        [ "$rc" = 124 ] && echo "   TIMED OUT after $limit s" \
            || echo "   FAILED (status $rc), $((SECONDS - t)) s"
        tail -n 5 "$D/$name.log" | sed 's/^/   | /'
    fi
    return "$rc"
}

[ -f data/tinyshakespeare.txt ] \
    || { echo "lease: data/tinyshakespeare.txt is missing" >&2; exit 2; }
{
    nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap \
        --format=csv,noheader
    grep -m1 "model name" /proc/cpuinfo
    echo "cores: $(nproc)"
    python3 -c "import torch; print('torch', torch.__version__)" 2>&1
    nvcc --version | tail -n 1
} >"$D/machine.txt" 2>&1
cat "$D/machine.txt"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1 \
     | tr -d '. ')
[ -n "$cc" ] || cc=90

step build 240 make -j"$(nproc)" ch5 ch6 ch8 NO_BLAS=1 \
    CUDA_ARCH="$cc" || { echo "lease: the build failed" >&2; exit 1; }
step check 90 ./ch8 --check
step kernels 60 make -j"$(nproc)" NO_BLAS=1 CUDA_ARCH="$cc" \
    build/cc-noblas/tests/bench/cuda/attention_blocks.gpu
[ -x build/cc-noblas/tests/bench/cuda/attention_blocks.gpu ] \
    && step attention-blocks 90 \
        build/cc-noblas/tests/bench/cuda/attention_blocks.gpu --repeats 10
B=tests/bench/cuda/bench_gpu.py
step bench-nanogpt 150 python3 "$B" --steps 40 --quick --models nanogpt \
    --only "ch8,ch8 --bf16,ch8 --bf16 --causal-block 0,ch8 --bf16 --flash,torch eager,torch eager bf16"
step bench-fused 120 python3 "$B" --steps 40 --quick --models nanogpt \
    --only "ch8,ch8 --unfused,ch8 --bf16,ch8 --bf16 --unfused"
step bench-graph 120 python3 "$B" --steps 40 --quick --models nanogpt \
    --only "ch8 --bf16 --dropout 0,ch8 --bf16 --dropout 0 --graph,torch eager bf16 --dropout 0"
N6="--layers 6 --heads 6 --embd 384 --block 256 --batch 64 --dropout 0"
N6="$N6 --steps 30 --eval-every 0 --sample-chars 0"
step graph-losses 90 bash -c "./ch8 $N6 --log $D/direct.csv >/dev/null \
    && ./ch8 $N6 --graph --log $D/graph.csv >/dev/null \
    && cut -d, -f1,2,6 $D/direct.csv > $D/direct3.csv \
    && cut -d, -f1,2,6 $D/graph.csv > $D/graph3.csv \
    && cmp $D/direct3.csv $D/graph3.csv && echo 'graph: the same losses'"
step bench-gpt2 120 python3 "$B" --steps 20 --quick \
    --models gpt2-124M-shape \
    --only "ch8 --bf16,ch8 --bf16 --flash,torch eager bf16"
SANITIZERS=0 step gpu-check 120 bash tests/bench/cuda/gpu_check.sh "$D/gpu-check"

echo "== summary ($(($(date +%s) - T0)) s in all, $fails step(s) failed)"
tail -n 1 "$D/check.log" 2>/dev/null
for f in bench-nanogpt bench-fused bench-graph bench-gpt2; do
    [ -f "$D/$f.log" ] && grep -E '^\|' "$D/$f.log"
done
[ -f "$D/attention-blocks.log" ] \
    && grep -E '^-- |^v[0-9]|^  block' "$D/attention-blocks.log"
[ "$fails" = 0 ]
