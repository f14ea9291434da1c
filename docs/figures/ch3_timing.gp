# ch3_timing.gp - attention's and the FFN's time (forward and backward, one
# thread) against T, and their ratio against the FLOP count's prediction:
# build/figures-data/ch3/timing.csv (T,attention_ms,ffn_ms,flops_ratio,
# the median CPU time of 5 runs each). Timings, so never the same twice.
load 'docs/figures/common.gp'
eval svg(900, 420)
set output out.'/ch3_timing.svg'
f = data.'/ch3/timing.csv'
stats f skip 1 using 1 nooutput
set grid
set xrange [0:STATS_max]
set xlabel "T (tokens per sequence)"
set multiplot layout 1,2
set title "forward + backward, ms of CPU time (median of 5 runs)"
set key top left
set yrange [0:*]
plot f skip 1 using 1:2 with linespoints lw 2 pt 7 ps 0.6 \
       lc rgb "#3182bd" title "attention (mha_*)", \
     f skip 1 using 1:3 with linespoints lw 2 pt 7 ps 0.6 \
       lc rgb "#e6550d" title "FFN (ffn_*)"
set title "FFN time / attention time"
set key top right
set yrange [0:*]
plot f skip 1 using 1:($3 / $2) with linespoints lw 2 pt 7 ps 0.6 \
       lc rgb "#08306b" title "measured", \
     f skip 1 using 1:4 with lines lw 2 dt 2 lc rgb "#999999" \
       title "FLOPs: 4C / (2C + T)", \
     1 with lines lw 1.5 lc rgb "#555555" title "equal time"
unset multiplot
