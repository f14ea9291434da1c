# ch1_unigram.gp - how often each character occurs in Tiny Shakespeare's
# train split: build/figures-data/ch1/unigram.csv (id,char,count).
load 'docs/figures/common.gp'
eval svg(900, 400)
set output out.'/ch1_unigram.svg'
set style fill solid 0.8 noborder
set boxwidth 0.8
set xrange [-1:65]
# (13.5 px apart: every character, one glyph each, fits at the text's size)
set xtics scale 0
set ylabel "occurrences in train (thousands)"
set grid ytics
plot data.'/ch1/unigram.csv' skip 1 using 1:($3/1000):xtic(char(strcol(2))) \
     with boxes lc rgb "#3182bd"
