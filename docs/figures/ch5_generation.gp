# ch5_generation.gp - the time of each new token of ./ch5's default run,
# with the KV cache and without it (the fastest of ten runs each, on the
# machine that built the book). build/figures-data/ch5_default/
# generation.csv (token,cached_ms,uncached_ms). A log scale: the two are
# ten to twenty times apart.
load 'docs/figures/common.gp'
eval svg(720, 420)
set output out.'/ch5_generation.svg'
f = data.'/ch5_default/generation.csv'
set logscale y
set format y "%g"
set grid
set key top left
set xlabel "new token"
set ylabel "milliseconds for the token"
plot f skip 1 using 1:3 with lines lw 2 lc rgb "#e6550d" \
         title "without the cache", \
     f skip 1 using 1:2 with lines lw 2 lc rgb "#3182bd" \
         title "with the KV cache"
