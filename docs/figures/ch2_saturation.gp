# ch2_saturation.gp - how peaked the softmax of random q.k scores gets as
# d_k grows, with the scores scaled by 1/sqrt(d_k) and without:
# build/figures-data/ch2/saturation.csv (d_k,scaled,score_std,max_weight,
# entropy,one_minus_sum_p2), the scaled row of each d_k first.
load 'docs/figures/common.gp'
eval svg(900, 400)
set output out.'/ch2_saturation.svg'
f = data.'/ch2/saturation.csv'
keys = 128                       # the keys of each softmax
set key below   # (the curves cross every corner of both panels)
set grid
set logscale x 2
set xrange [1:512]
set xlabel "d_k (components of q and k)"
set multiplot layout 1,2
set title "largest weight of a row (mean)"
set yrange [0:1]
plot f skip 1 every 2 using 1:4 with linespoints lw 2 pt 7 ps 0.6 \
       lc rgb "#3182bd" title "scaled by 1/sqrt(d_k)", \
     f skip 1 every 2::1 using 1:4 with linespoints lw 2 pt 7 ps 0.6 \
       lc rgb "#e6550d" title "not scaled", \
     1.0 / keys with lines dt 2 lw 1.5 lc rgb "#555555" title "uniform: 1/128"
set title "entropy of a row (mean)"
set yrange [0:5]
plot f skip 1 every 2 using 1:5 with linespoints lw 2 pt 7 ps 0.6 \
       lc rgb "#3182bd" title "scaled by 1/sqrt(d_k)", \
     f skip 1 every 2::1 using 1:5 with linespoints lw 2 pt 7 ps 0.6 \
       lc rgb "#e6550d" title "not scaled", \
     log(keys) with lines dt 2 lw 1.5 lc rgb "#555555" title "uniform: ln 128"
unset multiplot
