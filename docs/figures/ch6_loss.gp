# ch6_loss.gp - a short training run: the loss of each step's batch, the
# evaluated train and val losses, and the learning rate on the right axis.
# build/figures-data/ch6/log.csv, the CSV of ./ch6 --log (step,batch_loss,
# eval_train_loss,eval_val_loss,lr,grad_norm,tokens_per_s): a step's row
# has no evaluation losses, an evaluation's row no batch loss or lr.
load 'docs/figures/common.gp'
eval svg(720, 440)
set output out.'/ch6_loss.svg'
f = data.'/ch6/log.csv'
set key top right
set grid
set xlabel "step"
set ylabel "loss (nats per character)"
set y2label "learning rate"
set y2tics
set ytics nomirror
set format y2 "%g"
set y2range [0:*]
plot f skip 1 using 1:2 with lines lc rgb "#bbbbbb" title "batch loss", \
     f skip 1 using 1:3 with linespoints pt 7 ps 0.6 lw 2 lc rgb "#3182bd" title "train (evaluated)", \
     f skip 1 using 1:4 with linespoints pt 5 ps 0.6 lw 2 lc rgb "#e6550d" title "val (evaluated)", \
     f skip 1 using 1:5 axes x1y2 with lines dt 2 lw 1.5 lc rgb "#31a354" title "learning rate (right)"
