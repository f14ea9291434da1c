# ch2_timing.gp - the attention layer's forward pass and its core against
# T, on one thread: build/figures-data/ch2/timing.csv (T,layer_ms,core_ms,
# the median of 5 runs each). Timings, so never the same twice.
load 'docs/figures/common.gp'
eval svg(900, 420)
set output out.'/ch2_timing.svg'
f = data.'/ch2/timing.csv'
# the dashed curve: a parabola c T^2 through the core's last point
stats f skip 1 using 1:3 nooutput
c = STATS_max_y / STATS_max_x**2
set key top left
set grid
set xrange [0:STATS_max_x]
set yrange [0:*]
set xlabel "T (tokens per sequence)"
set ylabel "forward pass, ms (median of 5 runs)"
plot f skip 1 using 1:2 with linespoints lw 2 pt 7 ps 0.6 \
       lc rgb "#08306b" title "whole layer (mha_forward)", \
     f skip 1 using 1:3 with linespoints lw 2 pt 7 ps 0.6 \
       lc rgb "#3182bd" title "attention core (attention_forward)", \
     f skip 1 using 1:($2 - $3) with linespoints lw 2 pt 7 ps 0.6 \
       lc rgb "#999999" title "the rest: projections, split, merge", \
     c * x**2 with lines dt 2 lw 1.5 lc rgb "#e6550d" \
       title "c T^2 through the core's last point"
