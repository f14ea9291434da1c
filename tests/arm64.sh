#!/usr/bin/env bash
# arm64.sh - the course as a student on arm64 Linux builds and runs it
# (a Raspberry Pi, a Graviton or Ampere server, Debian in a container on
# a Mac with Apple silicon), checked on this x86-64 machine. Run by
# `make check-arm64` from the repository root:
#
#   bash tests/arm64.sh HOST_BUILD
#
# HOST_BUILD is this machine's build folder (build/cc), holding ch1 .. ch7,
# whose output the arm64 programs' is compared with.
#
#  1. builds everything for arm64 with Debian's cross compiler
#     (make CC=aarch64-linux-gnu-gcc, into build/aarch64-linux-gnu-gcc/),
#     against the arm64 builds of OpenBLAS and Check;
#  2. reports which loops of the hot files the compiler vectorised for
#     NEON, beside those it vectorised here (-fopt-info-vec);
#  3. runs every Check suite and the grade table under qemu-aarch64-static,
#     with the tolerances of x86 (only Check's timeouts are stretched:
#     emulation is slow);
#  4. runs ./ch1 .. ./ch7 with short settings on both machines and compares
#     what they print, number by number;
#  5. compares a short ./ch6 training run's losses, step by step;
#  6. scores PyTorch's reference model with ./ch5 --score.
#
# The reports and logs go to build/arm64/. Nothing here measures speed:
# under emulation an arm64 program runs many times slower than on an
# arm64 CPU, and a time says nothing about one.
set -u
# awk, printf and sort read and write numbers by the locale ("0,5" under a
# German one): the C one, as make gives every command (see the Makefile)
export LC_ALL=C.UTF-8
unset LANGUAGE
HOST=${1:?usage: bash tests/arm64.sh HOST_BUILD (for example build/cc)}
MAKE=${MAKE:-make}
CROSS_CC=aarch64-linux-gnu-gcc
ARM=build/$CROSS_CC
OUT=build/arm64
QEMU=qemu-aarch64-static
# Every test's timeout times this: emulation runs the tests 5 to 30 times
# slower than this machine does, more on a busy one.
export CK_TIMEOUT_MULTIPLIER=${CK_TIMEOUT_MULTIPLIER:-20}
fails=0
start=$(date +%s)
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
step() { echo; echo "=== $* ($(( $(date +%s) - start )) s so far)"; }
# arm64 programs run through qemu, which loads arm64's C library from
# Debian's multiarch (/lib/ld-linux-aarch64.so.1 and /usr/lib/aarch64-linux-gnu;
# common/deps.sh arm64 installs them). Not `qemu -L /usr/aarch64-linux-gnu`:
# with qemu 7.2 the child of every fork hangs there, and Check runs each
# test in a child.
arm() { "$QEMU" "$@"; }

if [ "$(uname -m)" = aarch64 ]; then
    echo "arm64.sh: this machine is arm64: make check runs everything" \
         "natively here" >&2
    exit 2
fi
for p in ch1 ch2 ch3 ch4 ch5 ch6 ch7; do
    [ -x "$HOST/$p" ] || { echo "arm64.sh: no $HOST/$p" >&2; exit 2; }
done
rm -rf "$OUT" && mkdir -p "$OUT/runs" "$OUT/vec"
# the cross compilers, the arm64 libraries and qemu, installed when missing
bash common/deps.sh arm64 || exit 1

# ---- 1. the cross build -------------------------------------------------------
step "1. build for arm64 with $CROSS_CC (into $ARM/)"
XMAKE=("$MAKE" --no-print-directory CC=$CROSS_CC HAVE_NVCC= EXERCISES=solutions)
"${XMAKE[@]}" banner runner $(printf "$ARM/ch%d " 1 2 3 4 5 6 7) \
    | grep -v 'is up to date\.$'
[ "${PIPESTATUS[0]}" = 0 ] || { echo "arm64.sh: the arm64 build failed" >&2; exit 1; }
RUNNER=$("${XMAKE[@]}" -s grade-paths | awk '{ print $1 }')
echo "  ch1 .. ch7 and the tests' runner:" \
     "$(aarch64-linux-gnu-readelf -h "$ARM/ch6" | sed -n 's/^ *Machine: *//p')" \
     "programs, for qemu"
echo "  ch8: not built for arm64: its GPU half needs CUDA's nvcc, which is"
echo "  not cross-built here; its kernels are still checked, emulated on the"
echo "  CPU, by the ch8 suites below"

# ---- 2. NEON: which loops vectorise ---------------------------------------------
# Each hot file compiled again with its own build's command, plus
# -fopt-info-vec-optimized, into /dev/null: the loops the compiler
# vectorised, here (-march=native) and for arm64 (NEON, the baseline of
# every arm64 CPU: a cross build knows no more of the CPU than that).
step "2. vectorised loops of the hot files, arm64 (NEON) against x86-64"
HOT="chapters/ch2_attention/attention.c chapters/ch2_attention/linear.c
     chapters/ch3_ffn/activation.c chapters/ch3_ffn/swiglu.c
     chapters/ch3_ffn/dropout.c chapters/ch4_block/layernorm.c
     chapters/ch4_block/residual.c chapters/ch5_model/embedding.c
     chapters/ch5_model/crossentropy.c chapters/ch6_training/optim.c"
# vec_lines BUILD SRC: the source lines of SRC's vectorised loops, one a line
vec_lines() {
    local obj=$1/${2%.c}.o cmd
    cmd=$(if [ "$1" = "$ARM" ]; then "${XMAKE[@]}" -n -B V=1 "$obj"
          else "$MAKE" --no-print-directory -n -B V=1 "$obj"; fi \
          | grep -F -- " -c $2 -o $obj" | head -n 1)
    [ -n "$cmd" ] || { echo "arm64.sh: no command for $obj" >&2; return 1; }
    cmd=${cmd% -o *}
    bash -c "$cmd -o /dev/null -fopt-info-vec-optimized" 2>&1 \
        | sed -n "s|^$2:\([0-9]*\):.*loop vectorized.*|\1|p" | sort -nu
}
# func_of SRC LINE...: "function:line" for each LINE (the definition above it)
func_of() {
    local src=$1; shift
    awk -v want=" $* " '
        /^[A-Za-z_][A-Za-z0-9_ \t\*]*\(/ && !/;[ \t]*$/ {
            f = $0; sub(/\(.*/, "", f); sub(/.*[ \t\*]/, "", f) }
        index(want, " " NR " ") { printf "%s%s:%d", (n++ ? " " : ""), f, NR }
        END { print "" }' "$src"
}
for src in $HOT; do
    a=$(vec_lines "$ARM" "$src" | tr '\n' ' ')
    x=$(vec_lines "$HOST" "$src" | tr '\n' ' ')
    echo "$src" >> "$OUT/vec/report.txt"
    echo "  arm64: $(func_of "$src" $a)" >> "$OUT/vec/report.txt"
    echo "  x86:   $(func_of "$src" $x)" >> "$OUT/vec/report.txt"
    only_x=$(comm -23 <(printf '%s\n' $x | sort) <(printf '%s\n' $a | sort) | sort -n)
    only_a=$(comm -13 <(printf '%s\n' $x | sort) <(printf '%s\n' $a | sort) | sort -n)
    printf '  %-30s %2d loops on arm64, %2d on x86\n' "${src#chapters/}" \
        $(echo $a | wc -w) $(echo $x | wc -w)
    [ -n "$only_x" ] && echo "      x86 only:   $(func_of "$src" $only_x)"
    [ -n "$only_a" ] && echo "      arm64 only: $(func_of "$src" $only_a)"
done
echo "  (the loops of each, function:line, in $OUT/vec/report.txt)"

# ---- 3. the Check suites and the grade table, emulated ------------------------------
step "3. every Check suite and the grade table under $QEMU"
echo "  (timeouts x $CK_TIMEOUT_MULTIPLIER; one test at a time, each in a child)"
mkdir -p "$OUT/grade"
t0=$(date +%s)
arm "$RUNNER" --json "$OUT/grade/results.json" < /dev/null > "$OUT/unit.log" 2>&1
rc=$?
sed -n '/^ *exercise/,$p' "$OUT/unit.log" | tail -n 4
grep -E '^[0-9]+%: Checks' "$OUT/unit.log"
[ $rc = 0 ] || { grep -E ':[EF]:' "$OUT/unit.log" | head -n 20
                 fail "Check suites under $QEMU (exit $rc; $OUT/unit.log)"; }
json_num() { sed -n "s/^ *\"$1\": \([0-9.]*\),\{0,1\}$/\1/p" \
                 "$OUT/grade/results.json" | head -n 1; }
score=$(json_num score) max=$(json_num max_score)
if [ -n "$max" ] && [ "$max" != 0 ] && [ "$score" = "$max" ]; then
    echo "  grade table: solutions $score / $max ($(( $(date +%s) - t0 )) s)"
else
    fail "the solutions scored ${score:-?} / ${max:-?} under $QEMU"
fi

# ---- 4. the programs, side by side ---------------------------------------------------
# Both sides on one thread (the results never depend on the count), so that
# the emulation does not fight this machine's other jobs for the cores.
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
step "4. ./ch1 .. ./ch7, short runs, arm64 (emulated) against x86-64"
# What differs on purpose is masked before the comparison: times, speeds,
# the memory a process holds and the estimates that start from it (under
# qemu the process is qemu's, some 10 MiB more), and the sections made of
# them (chapter 2's and 3's timing tables, chapter 6's chart, which the
# CSV of 5. replaces). The rest is compared word by word,
# wherever the lines wrap: words must be equal; numbers equal, or equal
# to their last printed digits (2 units of it), or both below 1e-3 (the
# errors of gradient checks and the like, which measure rounding itself).
# Why numbers may differ at all, with -ffp-contract=off on both sides:
# the matrix products are OpenBLAS's, whose arm64 and x86 kernels add in
# other orders and fuse multiplies with adds, and the C library's float
# functions (expf, logf) are built for each machine. Vectorising does not
# change a result: without -ffast-math gcc never reorders a sum, and
# the code's own vector sums (16 lanes) fix their order. What a program
# says about such a rounding is one phrase for the comparison (as_one
# below): ./ch3 finds two tokens' outputs identical with one kernel and
# 7.5e-08 apart with another. Measured here: ch1 and ch4 print the very
# same words and numbers, ch2 the same but one gradient check's error
# (8.9e-08 on x86, 7.5e-08 on arm64), ch3 the same but that phrase, ch5
# to ch7 the same once times and speeds are masked. (OpenBLAS's kernels
# for other x86 CPUs, OPENBLAS_CORETYPE=Haswell and the like on an
# AVX-512 machine, give the same kinds of difference.)
mask() {
    sed -E -e '/^time  /d' -e '/^timing  /,/^time  /d' \
        -e 's/this process [0-9.]+/this process N/' \
        -e 's/peak memory [0-9.]+ MiB/peak memory N MiB/' \
        -e 's/estimated [0-9.]+ MiB/estimated N MiB/' \
        -e 's/[0-9]+ tok(en)?s?\/s/N tokens\/s/g' \
        -e 's/in [0-9.]+ s:/in T s:/; s/[0-9.]+x slower/Nx slower/' \
        -e 's/ETA [0-9hms.]+/ETA T/; s/\[[0-9.]+ s\]/[T s]/' \
        -e 's/[0-9.]+ s training/T s training/' \
        -e '/^loss curve/,$d' "$1"
}
# compare NAME: $OUT/runs/NAME.{x86,arm64} word by word (see above)
compare() {
    local n=$1
    mask "$OUT/runs/$n.x86" > "$OUT/runs/$n.x86.m"
    mask "$OUT/runs/$n.arm64" > "$OUT/runs/$n.arm64.m"
    awk -v name="$n" '
    function num(s) { return match(s, /-?[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?/) }
    function unit(s,   m, e, d) {       # the place of its last printed digit
        m = s; e = 0
        if (match(m, /[eE][-+]?[0-9]+$/)) { e = substr(m, RSTART + 1) + 0
                                            m = substr(m, 1, RSTART - 1) }
        d = index(m, ".") ? length(m) - index(m, ".") : 0
        return 10 ^ (e - d)
    }
    # w[1..n] again, with what a program says about a rounding made one
    # phrase: whether two results are identical or differ in their last
    # bits depends on the BLAS kernel (./ch3: "their outputs are
    # identical" on arm64, "differ by 7.5e-08, a rounding (...)" on x86)
    # (said: how many such phrases said "differ")
    function as_one(w, n,   s, i) {
        s = w[1]; for (i = 2; i <= n; i++) s = s " " w[i]
        gsub(/their outputs are identical/, "their outputs agree to a rounding", s)
        said = gsub(/their outputs differ by [-+.0-9e]+, a rounding \(the product sums their rows in another order\)/,
                    "their outputs agree to a rounding", s)
        return split(s, w, " ")
    }
    NR == FNR { for (i = 1; i <= NF; i++) a[++na] = $i; next }
    { for (i = 1; i <= NF; i++) b[++nb] = $i }
    END {
        na = as_one(a, na); said_a = said; nb = as_one(b, nb)
        worded = said_a > said ? said_a - said : said - said_a
        bad = 0; digit = 0; noise = 0
        if (na != nb) { printf "  %s: %d words against %d\n", name, na, nb; exit 1 }
        for (i = 1; i <= na; i++) {
            if (a[i] == b[i]) continue
            if (!num(a[i])) { bad++; continue }
            pa = substr(a[i], 1, RSTART - 1); sa = substr(a[i], RSTART + RLENGTH)
            xs = substr(a[i], RSTART, RLENGTH); x = xs + 0
            if (!num(b[i])) { bad++; continue }
            pb = substr(b[i], 1, RSTART - 1); sb = substr(b[i], RSTART + RLENGTH)
            ys = substr(b[i], RSTART, RLENGTH); y = ys + 0
            d = x - y; if (d < 0) d = -d
            if (pa != pb || sa != sb) { bad++ }
            else if (d <= 2 * unit(xs) * 1.0000001) { digit++; ex_d = ex_d " " xs "/" ys }
            else if ((x < 1e-3 && x > -1e-3) && (y < 1e-3 && y > -1e-3)) {
                noise++; ex_n = ex_n " " xs "/" ys }
            else bad++
            if (bad && !shown) { shown = 1
                printf "  %s: word %d differs: x86 \"%s\", arm64 \"%s\"\n", name, i, a[i], b[i] }
        }
        if (bad) exit 1
        if (!digit && !noise && !worded) {
            printf "  %-5s identical (%d words)\n", name, na; exit 0 }
        printf "  %-5s the same %d words but", name, na
        if (digit) printf " %d number%s in the last digit", digit, (digit > 1 ? "s" : "")
        if (digit && noise) printf " and"
        if (noise) printf " %d error measure%s (< 1e-3)", noise, (noise > 1 ? "s" : "")
        if ((digit || noise) && worded) printf " and"
        if (worded) printf " %d rounding (identical on one side)", worded
        if (ex_d ex_n == "") { printf "\n"; exit 0 }
        printf ":\n        x86/arm64%s\n", substr(ex_d ex_n, 1, 60) \
               (length(ex_d ex_n) > 60 ? " ..." : "")
    }' "$OUT/runs/$n.x86.m" "$OUT/runs/$n.arm64.m"
}
# side NAME PROGRAM ARGS...: PROGRAM on both machines, then compare; @SIDE@
# in an argument becomes x86 or arm64
side() {
    local n=$1 p=$2 rx ra
    shift 2
    "$HOST/$p" "${@//@SIDE@/x86}" < /dev/null > "$OUT/runs/$n.x86" \
        2> "$OUT/runs/$n.x86.err"
    rx=$?
    arm "$ARM/$p" "${@//@SIDE@/arm64}" < /dev/null > "$OUT/runs/$n.arm64" \
        2> "$OUT/runs/$n.arm64.err"
    ra=$?
    if [ $rx != 0 ] || [ $ra != 0 ]; then
        fail "$n: exit status $rx on x86, $ra on arm64"; cat "$OUT/runs/$n.arm64.err"
        return
    fi
    compare "$n" || fail "$n: arm64 and x86 print other things (diff $OUT/runs/$n.x86.m $OUT/runs/$n.arm64.m)"
}
side ch1 ch1
side ch2 ch2 --max-T 64
side ch3 ch3 --max-T 64
side ch4 ch4
side ch5 ch5 --tokens 50
side ch6 ch6 --layers 2 --heads 2 --embd 64 --block 64 --batch 8 \
    --steps 40 --warmup 5 --eval-every 10 --eval-iters 4 --sample-chars 100 \
    --threads 1 --log "$OUT/runs/ch6-@SIDE@.csv"
side ch7 ch7 --steps 30 --eval-every 30 --print-every 10 --threads 1
echo "  ch8   skipped: not built for arm64 (see 1.)"

# ---- 5. chapter 6's losses, step by step ------------------------------------------------
# The run above (2 layers, 64 wide, 40 steps of 8 x 64 tokens), its CSV
# logs side by side: every batch loss, evaluation and gradient norm.
# Only rounding separates the two machines (see 4.), and training carries
# it forward: AdamW's step m / sqrt(v) is as large for a tiny gradient as
# for a big one, so a rounding in one weight's gradient becomes a change
# of up to lr in that weight. The first step's loss is one forward pass
# of the same weights and must agree to 1e-5 (float32's rounding of sums
# of a few hundred terms is about 1e-6 of 4.2). Later losses must agree to
# 1e-3, a tenth of a percent of the loss. Measured: the two machines
# differ by 3e-6 at most over the 40 steps (step 1 exactly equal), less
# than this x86 machine differs from itself when only OpenBLAS's kernel
# changes (8e-6 with OPENBLAS_CORETYPE=Haswell on an AVX-512 Xeon, run
# below for comparison), while a learning rate 1% higher moves them by
# 1e-2, and clipping the gradient's norm at 0.99 rather than 1 by 2e-3:
# a real difference of arithmetic shows, rounding does not.
step "5. chapter 6's losses, arm64 against x86-64, step by step"
# lossdiff A.csv B.csv: the largest difference of the losses and gradient
# norms, then step 1's batch loss difference
lossdiff() {
    awk -F, 'NR == FNR { for (i = 2; i <= 6; i++) v[FNR, i] = $i; n = FNR; next }
        FNR > 1 { for (i = 2; i <= 6; i++) {
              if (i == 5 || $i == "" || v[FNR, i] == "") continue
              d = $i - v[FNR, i]; if (d < 0) d = -d
              if (d > m) m = d
              if (FNR == 2 && i == 2) first = d } }
        END { if (FNR != n) { print "rows", n, FNR; exit 1 }
              printf "%.2g %.2g\n", m, first }' "$1" "$2"
}
if [ -s "$OUT/runs/ch6-x86.csv" ] && [ -s "$OUT/runs/ch6-arm64.csv" ]; then
    read -r worst first <<<"$(lossdiff "$OUT/runs/ch6-x86.csv" "$OUT/runs/ch6-arm64.csv")"
    OPENBLAS_CORETYPE=Haswell "$HOST/ch6" --layers 2 --heads 2 --embd 64 \
        --block 64 --batch 8 --steps 40 --warmup 5 --eval-every 10 \
        --eval-iters 4 --sample-chars 0 --threads 1 --quiet \
        --log "$OUT/runs/ch6-x86-haswell.csv" < /dev/null > /dev/null 2>&1
    base=$(lossdiff "$OUT/runs/ch6-x86.csv" "$OUT/runs/ch6-x86-haswell.csv" \
           | cut -d' ' -f1)
    echo "  $(($(wc -l < "$OUT/runs/ch6-x86.csv") - 1)) rows: largest difference $worst (step 1: $first);" \
         "x86 against itself with"
    echo "  OpenBLAS's Haswell kernel: $base"
    awk -v w="$worst" -v f="$first" 'BEGIN { exit !(w <= 1e-3 && f <= 1e-5) }' \
        || fail "ch6's losses differ by $worst (step 1: $first): more than rounding"
else
    fail "ch6 wrote no log on one side"
fi

# ---- 6. PyTorch's reference model ---------------------------------------------------------
# as CI checks it on x86: the loss PyTorch computed for this text
step "6. ./ch5 --score: PyTorch's reference model, emulated"
got=$(arm "$ARM/ch5" --checkpoint tests/reference/ch5_bias.safetensors \
      --score "$(printf 'hate the east. toast: a hoe, a hat!\nshoe? oh, the seat.\n')" \
      < /dev/null)
want=$(sed -n '/^bias.score$/{n;p;}' tests/reference/ch5_gpt.txt)
echo "  arm64: $got; PyTorch: $want"
awk -v g="${got#loss }" -v w="$want" 'BEGIN { d = g - w; if (d < 0) d = -d
    exit !(w > 0 && d <= 1e-5 * w) }' || fail "./ch5 --score disagrees with PyTorch"

echo
if [ $fails = 0 ]; then
    echo "arm64: passed in $(( $(date +%s) - start )) s (correctness only:" \
         "times under emulation are not arm64's)"
else
    echo "arm64: $fails failed ($(( $(date +%s) - start )) s)" >&2
fi
[ $fails = 0 ]
