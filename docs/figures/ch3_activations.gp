# ch3_activations.gp - ReLU and the two GELUs (left) and their
# derivatives (right) on [-4, 4]: build/figures-data/ch3/activations.csv
# (x,relu,relu_grad,gelu,gelu_grad,gelu_tanh,gelu_tanh_grad).
load 'docs/figures/common.gp'
eval svg(900, 400)
set output out.'/ch3_activations.svg'
f = data.'/ch3/activations.csv'
set key top left
set grid
set xrange [-4:4]
set xlabel "x"
set multiplot layout 1,2
set title "activation"
plot f skip 1 using 1:2 with lines lw 2 lc rgb "#999999" title "ReLU", \
     f skip 1 using 1:4 with lines lw 2 lc rgb "#3182bd" title "GELU (exact, erf)", \
     f skip 1 using 1:6 with lines lw 2 dt 2 lc rgb "#e6550d" title "GELU (tanh form)"
set title "derivative"
set yrange [-0.2:1.2]
set key bottom right samplen 2   # (the curves fill the top left here)
plot f skip 1 using 1:3 with lines lw 2 lc rgb "#999999" title "ReLU'", \
     f skip 1 using 1:5 with lines lw 2 lc rgb "#3182bd" title "GELU' (exact)", \
     f skip 1 using 1:7 with lines lw 2 dt 2 lc rgb "#e6550d" title "GELU' (tanh form)"
unset multiplot
