# ch7_bleu.gp - a short German to English run: greedy val BLEU at each
# evaluation (left axis), and the val loss with each step's training
# loss (right axis). build/figures-data/ch7/translate.csv, the CSV of
# ./ch7 --task translate --log (step,loss,nll,lr,grad_norm,tokens_per_s,
# val_nll,val_bleu): a step's row has no val numbers, an evaluation's row
# nothing else.
load 'docs/figures/common.gp'
eval svg(720, 440)
set output out.'/ch7_bleu.svg'
f = data.'/ch7/translate.csv'
set key bottom right opaque
set grid
set xlabel "step"
set ylabel "val BLEU (greedy)"
set y2label "nll (nats per token)"
set ytics nomirror
set y2tics
set yrange [0:*]
set y2range [0:*]
plot f skip 1 using 1:3 axes x1y2 with lines lc rgb "#bbbbbb" \
         title "training batch nll (right)", \
     f skip 1 using 1:7 axes x1y2 with linespoints pt 5 ps 0.6 lw 1.5 \
         lc rgb "#e6550d" title "val nll (right)", \
     f skip 1 using 1:8 with linespoints pt 7 ps 0.8 lw 2 \
         lc rgb "#3182bd" title "val BLEU (left)"
