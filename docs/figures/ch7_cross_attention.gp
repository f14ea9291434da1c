# ch7_cross_attention.gp - the cross-attention of the last decoder layer
# for one held-out example: row = the output token being predicted,
# column = a source token. build/figures-data/ch7/cross_attention.csv
# (output,source,decoder_input,predicts,source_token,weight).
load 'docs/figures/common.gp'
eval svg(560, 480)
set output out.'/ch7_cross_attention.svg'
f = data.'/ch7/cross_attention.csv'
stats f skip 1 using 1:2 nooutput
set xrange [-0.5:STATS_max_y+0.5]
set yrange [STATS_max_x+0.5:-0.5]
set size ratio -1
set cbrange [0:1]
set xtics scale 0
set ytics scale 0
set xlabel "source token"
set ylabel "output token predicted"
set cblabel "weight (mean of the heads)"
plot f skip 1 using 2:1:6 with image pixels, \
     f skip 1 using 2:(NaN):xtic(5) with points, \
     f skip 1 using (NaN):1:ytic(4) with points
