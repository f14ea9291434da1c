# ch6_profile.gp - where a training step's time goes, by kind of work:
# one bar per kind, its forward and its backward part, in ms per step,
# as ./ch6 --profile prints them. build/figures-data/ch6/profile.csv
# (kind,forward_ms,backward_ms,total_ms,percent).
load 'docs/figures/common.gp'
eval svg(760, 400)
set output out.'/ch6_profile.svg'
f = data.'/ch6/profile.csv'
stats f skip 1 using 4 nooutput
rows = STATS_records
set style fill solid 0.9 noborder
set yrange [rows - 0.5:-0.5]
set xrange [0:STATS_max * 1.3]
set ytics scale 0 nomirror
set xtics nomirror
set grid xtics
set xlabel "milliseconds per training step"
set key bottom right
plot f skip 1 using (0):0:(0):2:($0 - 0.35):($0 + 0.35):ytic(1) \
         with boxxyerror lc rgb "#3182bd" title "forward", \
     f skip 1 using (0):0:2:4:($0 - 0.35):($0 + 0.35) \
         with boxxyerror lc rgb "#e6550d" title "backward", \
     f skip 1 using 4:0:(sprintf("%.2f ms  %.1f%%", $4, $5)) \
         with labels left offset 0.5, 0
