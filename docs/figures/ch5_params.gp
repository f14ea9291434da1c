# ch5_params.gp - where the parameters of ./ch5's model are: one bar per
# line of its parameter report (a block's tensor counted over all the
# layers), coloured by the part of the model it belongs to.
# build/figures-data/ch5_default/params.csv (tensor,part,layers,params,
# percent); the tied LM head is a row of 0.
load 'docs/figures/common.gp'
eval svg(900, 460)
set output out.'/ch5_params.svg'
f = data.'/ch5_default/params.csv'
stats f skip 1 using 4 nooutput
rows = STATS_records
part_colour(p) = p eq "token embedding" ? 0x3182bd : \
                 p eq "position embedding" ? 0x9ecae1 : \
                 p eq "attention" ? 0xe6550d : \
                 p eq "FFN" ? 0x31a354 : \
                 p eq "LayerNorm" ? 0x756bb1 : 0x969696
# a block's tensor: "(x 4 layers)" after its name
row_name(t, l) = l > 1 ? sprintf("%s (x %d)", t, l) : t
bar_label(n, p) = n > 0 ? sprintf("%d  %.1f%%", n, p) : "0 (tied to wte)"
set style fill solid 0.9 noborder
set yrange [rows - 0.5:-0.5]
set xrange [0:STATS_max * 1.5]   # room for the numbers after the bars
set ytics scale 0
set xtics nomirror 100000
set format x '%.0s%c'   # 100k, 200k, ...
set ytics nomirror
set grid xtics
set xlabel "parameters (all layers)"
set key below horizontal maxcols 3
plot f skip 1 using (0):0:(0):4:($0 - 0.35):($0 + 0.35): \
         (part_colour(strcol(2))):ytic(row_name(strcol(1), $3)) \
         with boxxyerror lc rgb variable, \
     f skip 1 using 4:0:(bar_label($4, $5)) with labels left offset 0.5, 0, \
     NaN with boxes lc rgb "#3182bd" title "token embedding", \
     NaN with boxes lc rgb "#9ecae1" title "position embedding", \
     NaN with boxes lc rgb "#e6550d" title "attention", \
     NaN with boxes lc rgb "#31a354" title "FFN", \
     NaN with boxes lc rgb "#756bb1" title "LayerNorm"
