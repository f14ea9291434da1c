# ch4_depth.gp - the gradient norms, block by block, of a deep Pre-LN and
# Post-LN stack at initialisation, with GPT-2's initialisation (left) and
# the 2017 paper's scale (right): build/figures-data/ch4/depth.csv
# (init,norm,block,param_grad,input_grad; block 1 is the bottom).
load 'docs/figures/common.gp'
eval svg(900, 500)
set output out.'/ch4_depth.svg'
f = data.'/ch4/depth.csv'
stats f skip 1 using 3 nooutput
L = int(STATS_max)
# column c of the rows of one init and one norm, NaN elsewhere
pick(i, n, c) = strcol(1) eq i && strcol(2) eq n ? column(c) : NaN
set grid
set logscale y
set yrange [0.1:100]
set xrange [1:L]
set xlabel "block (1 = bottom, next to the input)"
set multiplot layout 1,2
do for [p = 1:2] {
    i = p == 1 ? "gpt2" : "2017"
    set title p == 1 ? "GPT-2 init (0.02, c_proj 0.02/sqrt(2L))" \
                     : "2017 init (1/sqrt(fan_in), no depth scaling)"
    set ylabel p == 1 ? "gradient norm" : ""
    # one key, where the left panel is empty (above its flat lines)
    if (p == 1) { set key top right } else { unset key }
    plot f skip 1 using 3:(pick(i, "pre", 4)) with linespoints lw 2 pt 7 \
           ps 0.5 lc rgb "#3182bd" title "Pre-LN, parameters", \
         f skip 1 using 3:(pick(i, "post", 4)) with linespoints lw 2 pt 7 \
           ps 0.5 lc rgb "#e6550d" title "Post-LN, parameters", \
         f skip 1 using 3:(pick(i, "pre", 5)) with lines lw 2 dt 2 \
           lc rgb "#3182bd" title "Pre-LN, input", \
         f skip 1 using 3:(pick(i, "post", 5)) with lines lw 2 dt 2 \
           lc rgb "#e6550d" title "Post-LN, input"
}
unset multiplot
