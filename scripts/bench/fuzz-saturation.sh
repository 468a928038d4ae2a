#!/usr/bin/env bash
# fuzz-saturation.sh [SECONDS] - for each libFuzzer target in build-fuzz/fuzz/: SECONDS (default 30)
# of CPU time from the committed seeds in a fresh workdir (tests/fuzz/run_fuzz.sh, as the fuzz
# smoke runs it), then when its edge coverage (cov) last grew, as a share of its executions, and
# its cov and ft at 25 % and 50 % of them: whether a shorter smoke would reach the same coverage.
# Needs the fuzz tree: make -f Makefile.ci fuzz-build.
cd "$(dirname "$0")/../.."
secs=${1:-30}
out=$(mktemp -d)
for f in build-fuzz/fuzz/fuzz_*; do
  name=${f##*/fuzz_}
  corpus=tests/fuzz/corpus/$name
  nice -n 5 bash tests/fuzz/run_fuzz.sh "$PWD/$f" "$secs" "$out/$name" "$corpus" >"$out/$name.res" 2>&1
  python3 - "$out/$name/log" "$name" >>"$out/summary.txt" <<'PY'
import re,sys
log,name=sys.argv[1],sys.argv[2]
pts=[]; init=None; total=0
for l in open(log,errors='replace'):
    m=re.match(r'#(\d+)\s+(\w+)\s+cov: (\d+) ft: (\d+)',l)
    if m:
        n,kind,cov,ft=int(m[1]),m[2],int(m[3]),int(m[4])
        if kind=='INITED': init=(n,cov,ft)
        pts.append((n,cov,ft))
    m=re.match(r'stat::number_of_executed_units: (\d+)',l)
    if m: total=int(m[1])
if not pts: print(name,'no data'); sys.exit()
fc,ff=pts[-1][1],pts[-1][2]
lastcov=min(n for n,c,f in pts if c==fc)
def at(frac):
    lim=total*frac; c=f=0
    for n,cc,ffv in pts:
        if n<=lim: c,f=cc,ffv
    return c,f
h=at(0.5); q=at(0.25)
print(f"{name:16} execs {total:>9} init cov {init[1] if init else '?':>5} final cov {fc:>5} ft {ff:>6} | last new cov at {100*lastcov/max(total,1):5.1f}% | at 25%: cov {q[0]} ft {q[1]} | at 50%: cov {h[0]} ft {h[1]}")
PY
done
cat "$out/summary.txt"
rm -rf "$out"
