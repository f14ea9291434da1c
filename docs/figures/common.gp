# common.gp - what every figure shares; each script loads it first.
#
# Run from the repository root as
#   gnuplot -e "data='build/figures-data'; out='docs/site/figures'" X.gp
# (make figures does). The SVG terminal writes no date or path into its
# file, so two builds give the same bytes; the fixed size and font keep it
# so on another machine too. noenhanced: labels such as "^" or "_" are
# printed as they are, not as super- or subscripts.
if (!exists("data")) data = 'build/figures-data'
if (!exists("out")) out = 'docs/site/figures'
set datafile separator comma
# Each script starts its SVG with `eval svg(WIDTH, HEIGHT)`: every option
# again, since a second `set terminal svg` resets those it does not name.
# The font: 15 px, as the figure is drawn in a page of 17 px text (the
# figures are at most 900 px wide, in a column of about 810 px: no label
# is drawn under 13 px; make docs-check measures it).
svg(w, h) = sprintf('set terminal svg size %d,%d fixed font ' \
                   . '"DejaVu Sans,15" noenhanced background rgb "white"', w, h)
set key noautotitle
set encoding utf8
# A character of the vocabulary as a tic label: the newline and the space
# (written "nl" and "sp" in the CSV files) as one glyph each, so that they
# fit beside their neighbours.
char(c) = c eq "nl" ? "↵" : c eq "sp" ? "␣" : c
# a heatmap's colours: white (0) to dark blue (the largest value)
set palette defined (0 "#ffffff", 1 "#9ecae1", 2 "#3182bd", 3 "#08306b")
