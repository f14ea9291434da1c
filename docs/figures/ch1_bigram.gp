# ch1_bigram.gp - the bigram counts as a heatmap: row = the character,
# column = the one after it, colour = log10(1 + count).
# build/figures-data/ch1/bigram.csv (prev,next,count); the axis labels
# come from unigram.csv (id,char,count).
load 'docs/figures/common.gp'
eval svg(760, 720)
set output out.'/ch1_bigram.svg'
set xrange [-0.5:64.5]
set yrange [64.5:-0.5]
set size ratio -1
# 65 rows and columns in 600 px: a label at the text's size for each
# would overlap, so only these are named (the newline, whose row the
# space's follows, and a few letters of each case; Z and a are
# neighbours, so a stands for the end of the capitals)
named(c) = c eq "nl" || c eq "A" || c eq "M" || c eq "a" || c eq "m" \
           || c eq "z" ? char(c) : ""
set xtics scale 0
set ytics scale 0
set xlabel "next character"
set ylabel "character"
set cblabel "log10(1 + count)"
plot data.'/ch1/bigram.csv' skip 1 using 2:1:(log10(1 + $3)) with image pixels, \
     data.'/ch1/unigram.csv' skip 1 using 1:(NaN):xtic(named(strcol(2))) \
       with points, \
     data.'/ch1/unigram.csv' skip 1 using (NaN):1:ytic(named(strcol(2))) \
       with points
