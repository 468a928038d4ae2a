# {{TITLE}}
# Written by `h2bench report` from its template report/templates/{{TEMPLATE}}.gp. To render
# {{NAME}}.png and {{NAME}}.svg again, run `gnuplot {{NAME}}.gp` in this directory.
reset
set encoding utf8
# gnuplot-nox has pngcairo; builds without cairo have the libgd png terminal only.
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
    set terminal pngcairo size {{WIDTH}},{{HEIGHT}} noenhanced font "sans,10" background "#ffffff"
} else {
    set terminal png size {{WIDTH}},{{HEIGHT}} noenhanced background "#ffffff"
}
set output '{{NAME}}.png'
set title {{TITLE}} noenhanced
set grid lc rgb "#dddddd"
set border 3 lc rgb "#444444"
set tics nomirror
set key noenhanced
set datafile missing "?"
