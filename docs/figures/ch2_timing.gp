# ch2_timing.gp - the attention layer's forward pass and its core against
# T, on one thread: build/figures-data/ch2/timing.csv (T,layer_ms,core_ms,
# the median CPU time of 5 runs each). Timings, so never the same twice.
load 'docs/figures/common.gp'
eval svg(900, 420)
set output out.'/ch2_timing.svg'
f = data.'/ch2/timing.csv'
# the dashed curve: the parabola c T^2 closest to the core's points (least
# squares: c = sum T^2 y / sum T^4), so one disturbed point moves it little
stats f skip 1 using ($1**2 * $3):($1**4) nooutput
c = STATS_sum_x / STATS_sum_y
stats f skip 1 using 1 nooutput
set key top left
set grid
set xrange [0:STATS_max]
set yrange [0:*]
set xlabel "T (tokens per sequence)"
set ylabel "forward pass, ms of CPU time (median of 5 runs)"
plot f skip 1 using 1:2 with linespoints lw 2 pt 7 ps 0.6 \
       lc rgb "#08306b" title "whole layer (mha_forward)", \
     f skip 1 using 1:3 with linespoints lw 2 pt 7 ps 0.6 \
       lc rgb "#3182bd" title "attention core (attention_forward)", \
     f skip 1 using 1:($2 - $3) with linespoints lw 2 pt 7 ps 0.6 \
       lc rgb "#999999" title "the rest: projections, split, merge", \
     c * x**2 with lines dt 2 lw 1.5 lc rgb "#e6550d" \
       title "c T^2 fitted to the core's points"
