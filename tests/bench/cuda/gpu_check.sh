#!/usr/bin/env bash
# gpu_check.sh - chapter 8's checks that need a real GPU, in one run:
#
#   bash tests/bench/cuda/gpu_check.sh [folder for the logs]  (build/gpu-check)
#
# SANITIZERS=0 leaves out step 2 (the sanitizers take most of the time).
#  1. ./ch8 --check: every kernel against its CPU function, on the device;
#  2. the same under compute-sanitizer's memcheck and racecheck (when it is
#     installed), and one training step under memcheck;
#  3. ten steps of a small model, dropout 0, on the CPU (./ch6) and on the
#     GPU (./ch8, with and without --flash): every step's loss and
#     gradient norm from the CSV logs, agreeing within 1e-4 relative;
#  4. identical losses run after run on the GPU, with dropout too;
#  5. checkpoints across the two: a GPU run resumed on the CPU and a CPU
#     run resumed on the GPU, and ./ch5 sampling from the GPU's checkpoint.
# Prints one line per check and exits 1 if any failed. Expects ./ch5,
# ./ch6 and ./ch8 built (make ch5 ch6 ch8). A few minutes on an H100.
set -u
D=${1:-build/gpu-check}
mkdir -p "$D"
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }
for p in ch5 ch6 ch8; do
    [ -x "./$p" ] || { echo "gpu_check: ./$p is not built (make $p)" >&2; exit 2; }
done

# 1, 2
if ./ch8 --check > "$D/check.txt" 2>&1; then
    ok "./ch8 --check: $(tail -n 1 "$D/check.txt")"
else
    bad "./ch8 --check"; grep FAILED "$D/check.txt"
fi
F="--layers 2 --heads 4 --embd 64 --block 64 --batch 8 --eval-every 0 --eval-iters 2 --sample-chars 0 --quiet"
if [ "${SANITIZERS:-1}" = 0 ]; then
    echo "skip compute-sanitizer: SANITIZERS=0"
elif command -v compute-sanitizer > /dev/null; then
    for tool in memcheck racecheck; do
        compute-sanitizer --tool $tool --error-exitcode 9 ./ch8 --check \
            > "$D/$tool.txt" 2>&1 && ok "compute-sanitizer $tool: $(tail -n 1 "$D/$tool.txt")" \
            || bad "compute-sanitizer $tool (see $D/$tool.txt)"
    done
    compute-sanitizer --tool memcheck --error-exitcode 9 ./ch8 $F --steps 2 \
        > "$D/memcheck-train.txt" 2>&1 && ok "compute-sanitizer memcheck, two training steps" \
        || bad "compute-sanitizer memcheck on training (see $D/memcheck-train.txt)"
else
    echo "skip compute-sanitizer: not installed"
fi

# 3: column 2 of the CSV is the batch loss, 6 the gradient norm
steps() { grep -E '^[0-9]+,[0-9.]+,' "$1" | cut -d, -f1,2,6; }
./ch6 $F --steps 10 --log "$D/cpu.csv" > /dev/null 2>&1 || bad "./ch6 ten steps"
for v in "" "--flash"; do
    ./ch8 $F $v --steps 10 --log "$D/gpu$v.csv" > /dev/null 2>&1 || bad "./ch8 $v ten steps"
    if awk -F, 'NR == FNR { l[$1] = $2; n[$1] = $3; next }
                { dl = ($2 - l[$1]) / l[$1]; dn = ($3 - n[$1]) / n[$1];
                  if (dl < 0) dl = -dl; if (dn < 0) dn = -dn;
                  if (dl > w) w = dl; if (dn > w) w = dn; c++ }
                END { printf "%d steps, largest relative difference %.1e\n", c, w > "/dev/stderr";
                      exit !(c == 10 && w <= 1e-4) }' \
        <(steps "$D/cpu.csv") <(steps "$D/gpu$v.csv") 2> "$D/cmp$v.txt"; then
        ok "ten steps, CPU against ./ch8 $v: $(cat "$D/cmp$v.txt")"
    else
        bad "ten steps, CPU against ./ch8 $v: $(cat "$D/cmp$v.txt")"
    fi
done

# 4
for drop in 0 0.2; do
    ./ch8 $F --dropout $drop --steps 20 --log "$D/a$drop.csv" > /dev/null 2>&1
    ./ch8 $F --dropout $drop --steps 20 --log "$D/b$drop.csv" > /dev/null 2>&1
    if [ -s "$D/a$drop.csv" ] && cmp -s <(steps "$D/a$drop.csv") <(steps "$D/b$drop.csv"); then
        ok "two GPU runs, dropout $drop: identical losses and norms"
    else
        bad "two GPU runs, dropout $drop, differ"
    fi
done

# 5
rm -rf "$D/g" "$D/c"
./ch8 $F --steps 30 --out "$D/g" > /dev/null 2>&1 \
    && ./ch6 --resume "$D/g" --steps 40 --quiet > "$D/resume-cpu.txt" 2>&1 \
    && grep -q "steps 40" "$D/resume-cpu.txt" \
    && ok "a GPU run resumed on the CPU: $(grep -o 'val [0-9.]*' "$D/resume-cpu.txt" | tail -n 1)" \
    || bad "a GPU run resumed on the CPU (see $D/resume-cpu.txt)"
./ch6 $F --steps 30 --out "$D/c" > /dev/null 2>&1 \
    && ./ch8 --resume "$D/c" --steps 40 --quiet > "$D/resume-gpu.txt" 2>&1 \
    && grep -q "steps 40" "$D/resume-gpu.txt" \
    && ok "a CPU run resumed on the GPU: $(grep -o 'val [0-9.]*' "$D/resume-gpu.txt" | tail -n 1)" \
    || bad "a CPU run resumed on the GPU (see $D/resume-gpu.txt)"
./ch5 --checkpoint "$D/g/model.safetensors" --tokens 80 > "$D/sample.txt" 2>&1 \
    && ok "./ch5 samples from the GPU's checkpoint" \
    || bad "./ch5 --checkpoint from the GPU (see $D/sample.txt)"

echo "gpu_check: $fails failed"
[ "$fails" = 0 ]
