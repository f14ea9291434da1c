# ch2_attention.gp - head 0's weights of chapter 2's example, with the
# causal mask and without it: build/figures-data/ch2/attention.csv
# (query,key,query_char,key_char,causal,unmasked).
load 'docs/figures/common.gp'
eval svg(900, 460)
set output out.'/ch2_attention.svg'
f = data.'/ch2/attention.csv'
stats f skip 1 using 1 nooutput
T = int(sqrt(STATS_records))
set xrange [-0.5:T-0.5]
set yrange [T-0.5:-0.5]
set size ratio -1
set cbrange [0:1]
set xtics scale 0
set ytics scale 0
set xlabel "key s"
set ylabel "query t"
set cblabel "weight"
set multiplot layout 1,2
set title "causal: a query sees only keys s <= t"
plot f skip 1 using 2:1:5 with image pixels, \
     f skip 1 using 2:(NaN):xtic(char(strcol(4))) with points, \
     f skip 1 using (NaN):1:ytic(char(strcol(3))) with points
set title "unmasked: every query sees every key"
plot f skip 1 using 2:1:6 with image pixels, \
     f skip 1 using 2:(NaN):xtic(char(strcol(4))) with points, \
     f skip 1 using (NaN):1:ytic(char(strcol(3))) with points
unset multiplot
