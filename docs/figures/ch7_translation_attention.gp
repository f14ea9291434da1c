# ch7_translation_attention.gp - the cross-attention of the last decoder
# layer while a German-to-English model writes its translation of one
# sentence: row = the English token being predicted, column = a German
# token. build/figures-data/ch7/translation_attention.csv
# (output,source,predicts,source_token,weight), written by
# ./ch7 --checkpoint F --translate TEXT --plot-data DIR.
load 'docs/figures/common.gp'
eval svg(620, 480)
set output out.'/ch7_translation_attention.svg'
f = data.'/ch7/translation_attention.csv'
stats f skip 1 using 1:2 nooutput
set xrange [-0.5:STATS_max_y+0.5]
set yrange [STATS_max_x+0.5:-0.5]
set size ratio -1
set cbrange [0:1]
set xtics scale 0 rotate by 45 right
set ytics scale 0
set xlabel "German source token"
set ylabel "English token predicted"
set cblabel "weight (mean of the heads)"
plot f skip 1 using 2:1:5 with image pixels, \
     f skip 1 using 2:(NaN):xtic(4) with points, \
     f skip 1 using (NaN):1:ytic(3) with points
