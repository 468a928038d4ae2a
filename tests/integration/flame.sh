# flame.sh - h2bench flame: the SVG of a real h2ref profile (tests/data/prof) parses as XML, its
# frames' widths add up to the sample count, headless Chromium renders it as a picture that is
# not blank, a differential graph parses too, and malformed folded input exits 2 naming
# file:line.
source "$(dirname "$0")/lib.sh"
DATA=$SRC/tests/data/prof
PNG_CHECK=$BIN/../tests/png_check
SVG_CHECK=$SRC/tests/tools/svg_check.py

samples=$(awk '{n += $NF} END {print n}' "$DATA/h2ref.folded")
"$H2BENCH" flame "$DATA/h2ref.folded" --own h2bench --title 'h2ref <100x10> & co' \
    -o "$TMP/h2ref.svg" --summary "$TMP/summary.json"
expect_eq "flame exit" "$?" 0
out=$(python3 "$SVG_CHECK" "$TMP/h2ref.svg" "$samples" 2>&1)
expect_eq "svg_check: $out" "$?" 0
expect_match "title escaped" "$(grep -o '<title>h2ref[^<]*</title>' "$TMP/h2ref.svg" | head -1)" \
    '&lt;100x10&gt; &amp; co'
expect_eq "summary samples" "$(jq .samples "$TMP/summary.json")" "$samples"
expect_eq "DSO split adds up to 100" \
    "$(jq '[.dso_pct[]] | add | (. > 99) and (. < 101)' "$TMP/summary.json")" true

# A differential graph of the profile against itself: every frame white, still valid.
"$H2BENCH" flame "$DATA/h2ref.folded" --diff "$DATA/h2ref.folded" -o "$TMP/same.svg"
expect_eq "diff exit" "$?" 0
out=$(python3 "$SVG_CHECK" "$TMP/same.svg" "$samples" 2>&1)
expect_eq "diff svg_check: $out" "$?" 0
expect_eq "no red in a self-diff" "$(grep -c 'fill="rgb(255,[0-9]*,[0-9]*)"' "$TMP/same.svg" | \
    awk '{print ($1 <= 1)}')" 1

# Bad input: exit 2, file:line named, nothing written.
printf 'a [x];b [y] 3\nbroken line without count\n' >"$TMP/bad.folded"
err=$("$H2BENCH" flame "$TMP/bad.folded" -o "$TMP/bad.svg" 2>&1)
expect_eq "malformed folded exit" "$?" 2
expect_match "names file:line" "$err" 'bad\.folded:2:'
expect_eq "no svg for bad input" "$(test -e "$TMP/bad.svg" && echo yes || echo no)" no

# Sample counts whose total passes 2^53 (issue 29 item 7: two stacks of 2^63 overflowed the
# total, UBSan aborted, the release build drew negative shares): exit 2 naming file:line:column;
# a total of exactly 2^53 is still drawn, every frame width finite.
printf 'a [x] 9223372036854775807
b [x] 9223372036854775807
' >"$TMP/big.folded"
err=$("$H2BENCH" flame "$TMP/big.folded" -o "$TMP/big.svg" 2>&1)
expect_eq "sample total past 2^53: exit" "$?" 2
expect_match "sample total past 2^53: names file:line:column" "$err" 'big\.folded:1:7: .*2\^53'
expect_eq "no svg for the overflow" "$(test -e "$TMP/big.svg" && echo yes || echo no)" no
printf 'a [x] 9007199254740991
b [x] 1
' >"$TMP/max.folded"
"$H2BENCH" flame "$TMP/max.folded" -o "$TMP/max.svg" 2>"$TMP/max.err"
expect_eq "a total of 2^53: exit" "$?" 0
expect_eq "a total of 2^53: no negative or huge width" \
    "$(grep -Eo 'width="[^"]*"' "$TMP/max.svg" | grep -Ec 'width="(-|[0-9]{5,})')" 0

# Headless Chromium: the SVG as a browser draws it is a picture with frames (the "all" frame's
# grey c8c8c8 and the legend's kernel orange and nghttp2 blue must be there).
if command -v chromium >/dev/null; then
    prof=$(mktemp -d)
    height=$(grep -o 'height="[0-9]*"' "$TMP/h2ref.svg" | head -1 | tr -dc 0-9)
    timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$prof" --window-size=1200,"$height" --screenshot="$TMP/h2ref.png" \
        "file://$TMP/h2ref.svg" >"$TMP/chromium.log" 2>&1
    rm -rf "$prof"
    out=$("$PNG_CHECK" "$TMP/h2ref.png" c8c8c8 e8913a 4e8fd6 2>&1)
    expect_eq "chromium screenshot not blank: $out" "$?" 0
else
    echo "SKIP: chromium not installed (make -f Makefile.ci deps installs it)"
    finish || exit 1
    exit 77
fi
finish
