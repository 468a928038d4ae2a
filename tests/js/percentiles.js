// percentiles.js FILE - for each line "NAME N ... BASE64" of `test_hist_hdr --export` (the last
// field is a histogram in HdrHistogram's V2 compressed encoding), decodes the histogram with
// HdrHistogram's JavaScript port and prints "NAME COUNT P50 P75 P90 P99 P999 P9999 MAX": the
// values of getValueAtPercentile, MAX being getValueAtPercentile(100).
"use strict";
const fs = require("fs");
const hdr = require("hdr-histogram-js");
for (const line of fs.readFileSync(process.argv[2], "utf8").split("\n")) {
  const f = line.trim().split(/\s+/);
  if (f.length < 2) continue;
  const h = hdr.decodeFromCompressedBase64(f[f.length - 1]);
  const ps = [50, 75, 90, 99, 99.9, 99.99, 100].map((p) => h.getValueAtPercentile(p));
  console.log([f[0], h.totalCount, ...ps].join(" "));
}
