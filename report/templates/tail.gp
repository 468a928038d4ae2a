set terminal svg size {{WIDTH}},{{HEIGHT}} dynamic noenhanced font "sans,10" background "#ffffff"
set output '{{NAME}}.svg'
replot
unset output
