// A `--require` preload (not a measure of `npm run bench`): times every synchronous
// ChildProcess spawn() of the process it is loaded into — the fork, and the wait for the
// child's exec, which Node's spawn() includes — and prints one line to stderr at exit:
// count, percentiles and mean in µs, and the mean per program. How to see what a node
// coordinator's children cost it, side by side with bench/runplan-node-floor.js:
//
//   NODE_OPTIONS="--require $PWD/bench/spawn-timing.cjs" packages/runplan/bin/runplan.js run PLAN
//
// A CPU profile's self time of ChildProcess.spawn is no substitute: it attributed runplan
// 0.7 ms more per spawn than the node floor, where timed like this the two are the same.
'use strict';
const { ChildProcess } = require('node:child_process');
const { writeSync } = require('node:fs');

const original = ChildProcess.prototype.spawn;
const spawns = [];
ChildProcess.prototype.spawn = function timedSpawn(options) {
  const start = process.hrtime.bigint();
  try {
    return original.call(this, options);
  } finally {
    spawns.push({ us: Number(process.hrtime.bigint() - start) / 1e3, file: String(options?.file ?? '?') });
  }
};

process.on('exit', () => {
  if (spawns.length === 0) return;
  const sorted = spawns.map((s) => s.us).sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))].toFixed(0);
  const mean = (values) => (values.reduce((a, b) => a + b, 0) / values.length).toFixed(0);
  const byFile = new Map();
  for (const s of spawns) byFile.set(s.file, [...(byFile.get(s.file) ?? []), s.us]);
  const perFile = [...byFile].map(([file, us]) => `${file.split('/').pop()} ${us.length}× ${mean(us)} µs`).join(', ');
  writeSync(2, `spawn-timing: ${sorted.length} spawns, p10 ${at(0.1)} p50 ${at(0.5)} p90 ${at(0.9)} µs, mean ${mean(sorted)} µs (${perFile})\n`);
});
