// decode_hdr.js LOG [VALUE...] - decodes every "Tag=NAME,start,length,max,HIST..." line of an
// HdrHistogram interval log with HdrHistogram's JavaScript port (hdr-histogram-js) and prints
// one JSON object: per tag the total count, min, max, p50/p90/p99/p99.9 and, for each VALUE
// given, the histogram's highest equivalent value (the value as the histogram can know it).
"use strict";
const fs = require("fs");
const hdr = require("hdr-histogram-js");
const [log, ...values] = process.argv.slice(2);
const out = {};
for (const line of fs.readFileSync(log, "utf8").split("\n")) {
  const m = /^Tag=([^,]+),([0-9.]+),([0-9.]+),([0-9.]+),(\S+)$/.exec(line);
  if (!m) continue;
  const h = hdr.decodeFromCompressedBase64(m[5]);
  out[m[1]] = {
    count: h.totalCount,
    min: h.minNonZeroValue,
    max: h.maxValue,
    p50: h.getValueAtPercentile(50),
    p90: h.getValueAtPercentile(90),
    p99: h.getValueAtPercentile(99),
    p999: h.getValueAtPercentile(99.9),
    interval_max_ms: Number(m[4]),
    highest_equivalent: values.map((v) => h.highestEquivalentValue(Number(v))),
  };
}
console.log(JSON.stringify(out));
