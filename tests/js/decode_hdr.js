// decode_hdr.js LOG [VALUE...] - decodes every "Tag=NAME,start,length,max,HIST..." line of an
// HdrHistogram interval log with HdrHistogram's JavaScript port (hdr-histogram-js) and prints
// one JSON object: per tag the total count, min, max, p50/p90/p95/p99/p99.9/p99.99 and, for each VALUE
// given, the histogram's highest equivalent value (the value as the histogram can know it).
// decode_hdr.js --sum LOG... - the same per tag for the histograms of all the logs added
// together (HdrHistogram's own add), the reference for `h2bench merge`.
"use strict";
const fs = require("fs");
const hdr = require("hdr-histogram-js");
const args = process.argv.slice(2);
const sum = args[0] === "--sum";
const logs = sum ? args.slice(1) : [args[0]];
const values = sum ? [] : args.slice(1);
const hists = {};
const maxima = {};
for (const log of logs) {
  for (const line of fs.readFileSync(log, "utf8").split("\n")) {
    const m = /^Tag=([^,]+),([0-9.]+),([0-9.]+),([0-9.]+),(\S+)$/.exec(line);
    if (!m) continue;
    const h = hdr.decodeFromCompressedBase64(m[5]);
    if (hists[m[1]]) hists[m[1]].add(h);
    else hists[m[1]] = h;
    maxima[m[1]] = Math.max(maxima[m[1]] || 0, Number(m[4]));
  }
}
const out = {};
for (const [tag, h] of Object.entries(hists)) {
  out[tag] = {
    count: h.totalCount,
    min: h.minNonZeroValue,
    max: h.maxValue,
    p50: h.getValueAtPercentile(50),
    p90: h.getValueAtPercentile(90),
    p95: h.getValueAtPercentile(95),
    p99: h.getValueAtPercentile(99),
    p999: h.getValueAtPercentile(99.9),
    p9999: h.getValueAtPercentile(99.99),
    interval_max_ms: maxima[tag],
    highest_equivalent: values.map((v) => h.highestEquivalentValue(Number(v))),
  };
}
console.log(JSON.stringify(out));
