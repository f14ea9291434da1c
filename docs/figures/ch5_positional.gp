# ch5_positional.gp - the sinusoidal position table: row = position t,
# column = channel, colour = its value in [-1, 1].
# build/figures-data/ch5/positional.csv (position,channel,value).
load 'docs/figures/common.gp'
eval svg(720, 640)
set output out.'/ch5_positional.svg'
f = data.'/ch5/positional.csv'
stats f skip 1 using 1:2 nooutput
set xrange [-0.5:STATS_max_y+0.5]
set yrange [STATS_max_x+0.5:-0.5]
set size ratio -1
set cbrange [-1:1]
set palette defined (-1 "#b2182b", 0 "#f7f7f7", 1 "#2166ac")
set xlabel "channel (2i: sin, 2i+1: cos)"
set ylabel "position t"
set cblabel "value"
plot f skip 1 using 2:1:3 with image pixels
