#!/usr/bin/env bash
# lease.sh - chapter 8's measurements for one short loan of a GPU machine,
# in the order of their value, each under a time limit, so that a lease of
# about ten minutes brings back the most it can:
#
#   bash tests/bench/cuda/lease.sh [folder for the logs]   (default: $OUT,
#                                                            else build/lease)
#
#  0. the machine: GPU, driver, CPU, PyTorch; then ./ch5, ./ch6, ./ch8 and
#     the attention benchmark built with NO_BLAS=1 (such a machine has no
#     OpenBLAS, and needs none: the CPU side only checks), for the GPU
#     that make finds (CUDA_ARCH: its compute capability, PTX for it too);
#  1. ./ch8 --check: every kernel against the CPU, on the device (the
#     tensor-core attention, flash_tc.cu, has never run on one before);
#  2. compute-sanitizer's racecheck (shared-memory races: a missing
#     __syncthreads or __syncwarp) on the attention benchmark at its small
#     sizes, which run every version, the tensor-core one included;
#  3. the attention benchmark (attention_blocks.cu) at T = 256 and 1,024:
#     the (T, T) way (v1 to v3), fused in fp32 (v4, flash.cu) and fused on
#     the tensor cores (v4 in bf16, flash_tc.cu);
#  4. the fused block against the plain one (--unfused), fp32 and bf16,
#     at nanoGPT's shape (bench_gpu.py);
#  5. a step as one CUDA graph against the same step launched kernel by
#     kernel: 30 steps at nanoGPT's shape without dropout, whose losses
#     and norms must be the same bits; then their speeds beside PyTorch
#     eager without dropout;
#  6. the whole model against PyTorch eager: nanoGPT's shape in fp32 and
#     bf16 ((T, T) with causal blocks, without, and fused on the tensor
#     cores), then the GPT-2 shape (block 1,024) in bf16;
#  7. gpu_check.sh without the sanitizers: losses against the CPU, run to
#     run, checkpoints across the two;
#  8. the build for compute capability 7.5 alone (a T4's: fp32 only, PTX
#     for 7.5), run here through the PTX the driver compiles: fp32 steps
#     train, and --bf16 --flash is refused with one line;
#  9. GPT-2 on the GPU (./ch8 --gpt2: chapter 9's fine-tuning task):
#     against ./ch9 --finetune on the CPU at a small GPT-2 of GPT-2's
#     vocabulary and block (the same losses within 2e-3, the run's files
#     and its Hugging Face copy written, its checkpoint read by ./ch9),
#     then steps of GPT-2 small's shape (random weights) at 4 x 64 and
#     8 x 1,024 beside PyTorch eager on the GPU (bench_gpt2_gpu.py);
# 10. when Nsight Compute (ncu) is installed, the shared-memory bank
#     conflicts of the tensor-core attention's kernels at the attention
#     benchmark's small sizes (chapter 8 expects none).
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

# 0. (make picks CUDA_ARCH from nvidia-smi; its last line names it)
AB=build/cc-noblas/tests/bench/cuda/attention_blocks.gpu
step build 240 make -j"$(nproc)" ch5 ch6 ch8 "$AB" NO_BLAS=1 \
    || { echo "lease: the build failed" >&2; exit 1; }
grep "built ./ch8" "$D/build.log"
# 1
step check 90 ./ch8 --check
# 2
if command -v compute-sanitizer > /dev/null; then
    step racecheck 90 compute-sanitizer --tool racecheck --error-exitcode 9 \
        "$AB" --small --validate-only
else
    echo "== racecheck: SKIPPED, compute-sanitizer not installed"
fi
# 3
step attention-blocks 90 "$AB" --repeats 10
# 4
B=tests/bench/cuda/bench_gpu.py
step bench-fused 120 python3 "$B" --steps 40 --quick --models nanogpt \
    --only "ch8,ch8 --unfused,ch8 --bf16,ch8 --bf16 --unfused"
# 5
N6="--layers 6 --heads 6 --embd 384 --block 256 --batch 64 --dropout 0"
N6="$N6 --steps 30 --eval-every 0 --sample-chars 0"
step graph-losses 90 bash -c "./ch8 $N6 --log $D/direct.csv >/dev/null \
    && ./ch8 $N6 --graph --log $D/graph.csv >/dev/null \
    && cut -d, -f1,2,6 $D/direct.csv > $D/direct3.csv \
    && cut -d, -f1,2,6 $D/graph.csv > $D/graph3.csv \
    && cmp $D/direct3.csv $D/graph3.csv && echo 'graph: the same losses'"
step bench-graph 120 python3 "$B" --steps 40 --quick --models nanogpt \
    --only "ch8 --bf16 --dropout 0,ch8 --bf16 --dropout 0 --graph,torch eager bf16 --dropout 0"
# 6
step bench-nanogpt 150 python3 "$B" --steps 40 --quick --models nanogpt \
    --only "ch8,ch8 --bf16,ch8 --bf16 --causal-block 0,ch8 --bf16 --flash,torch eager,torch eager bf16"
step bench-gpt2 120 python3 "$B" --steps 20 --quick \
    --models gpt2-124M-shape \
    --only "ch8 --bf16,ch8 --bf16 --flash,torch eager bf16"
# 7
SANITIZERS=0 step gpu-check 120 bash tests/bench/cuda/gpu_check.sh "$D/gpu-check"
# 8 (a build folder of its own: the one above stays as it is)
S="--layers 2 --heads 4 --embd 64 --block 64 --batch 8 --steps 3"
S="$S --eval-every 0 --sample-chars 0 --quiet"
step ptx-75 150 bash -c "make -j$(nproc) BUILD=build/lease75 NO_BLAS=1 \
        CUDA_ARCH=75 build/lease75/cc-noblas/ch8 >/dev/null \
    && build/lease75/cc-noblas/ch8 $S && echo 'fp32 from PTX 7.5: trains' \
    && ! build/lease75/cc-noblas/ch8 $S --bf16 --flash 2>$D/refused.txt \
    && [ \$(wc -l < $D/refused.txt) = 1 ] && cat $D/refused.txt"

# ---- 9: GPT-2 on the GPU ---------------------------------------------------
# (chapter 9's task through ./ch8 --gpt2; gpt2_random writes the models)
G=build/cc-noblas
# a GPT-2 of 2 layers, 64 wide, with GPT-2's 50,257 ids and block of
# 1,024, trained 3 steps on windows of 128 by ./ch9 --finetune and by
# ./ch8 --gpt2: their evaluations (steps 0 and 3) within 2e-3; samples of
# 200 tokens, whose windows the batch's activations do not hold
gpt2_vs_cpu() {
    local d=$1 a="--steps 3 --eval-every 3 --eval-iters 2 --batch 2"
    a="$a --window 128 --sample-tokens 200 --threads $(nproc)"
    rm -rf "$d/g2" "$d/g2cpu" "$d/g2gpu"
    build/cc-noblas/gpt2_random "$d/g2" tests/reference/ch9_tok 50257 1024 \
        2 2 64 || return 1
    ./ch9 --finetune --model "$d/g2" $a --out "$d/g2cpu" >"$d/g2cpu.txt" \
        || return 1
    ./ch8 --gpt2 --model "$d/g2" $a --out "$d/g2gpu" >"$d/g2gpu.txt" \
        || return 1
    paste -d' ' <(grep '^eval step' "$d/g2cpu.txt") \
        <(grep '^eval step' "$d/g2gpu.txt") | awk '
        { n++; d = $5 - $12; if (d < 0) d = -d; e = $7 - $14
          if (e < 0) e = -e
          printf "gpt2: eval step %d: train %.4f and %.4f, val %.4f and " \
              "%.4f (CPU, GPU)\n", $3, $5, $12, $7, $14
          if (d > 2e-3 || e > 2e-3) bad = 1 }
        END { exit (n == 2 && !bad) ? 0 : 1 }' || return 1
    ls "$d/g2gpu/hf/model.safetensors" "$d/g2gpu/vocab.json" \
        "$d/g2gpu/state-3.safetensors" >/dev/null || return 1
    ! grep -F "(sampling failed" "$d/g2gpu.txt" || return 1
    ./ch9 --checkpoint "$d/g2gpu/model.safetensors" --tokens 5 --greedy \
        --sample-only >/dev/null && echo "gpt2: the GPU's run is the CPU's"
}
export -f gpt2_vs_cpu
step gpt2-build 150 make -j"$(nproc)" NO_BLAS=1 ch9 "$G/gpt2_random" \
    && step gpt2-vs-cpu 120 bash -c "gpt2_vs_cpu $D" \
    && step gpt2-bench 240 python3 tests/bench/cuda/bench_gpt2_gpu.py \
        --bin "$G" --steps 20 --shapes 4x64,8x1024

# 10
if command -v ncu > /dev/null; then
    step bank-conflicts 90 ncu -k regex:flash_tc --metrics \
l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,\
l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum \
        "$AB" --small --validate-only
else
    echo "== bank-conflicts: SKIPPED, Nsight Compute (ncu) not installed"
fi

echo "== summary ($(($(date +%s) - T0)) s in all, $fails step(s) failed)"
tail -n 1 "$D/check.log" 2>/dev/null
tail -n 3 "$D/racecheck.log" 2>/dev/null
for f in bench-fused bench-graph bench-nanogpt bench-gpt2; do
    [ -f "$D/$f.log" ] && grep -E '^\|' "$D/$f.log"
done
[ -f "$D/attention-blocks.log" ] \
    && grep -E '^-- |^v[0-9]|^  block' "$D/attention-blocks.log"
[ -f "$D/bank-conflicts.log" ] \
    && grep -E 'flash_tc|bank_conflicts' "$D/bank-conflicts.log"
for f in gpt2-vs-cpu gpt2-bench; do   # (9)
    [ -f "$D/$f.log" ] && grep -E '^gpt2: |^GPU: |^\|' "$D/$f.log"
done
[ "$fails" = 0 ]
