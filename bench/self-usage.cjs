// A `--require` preload for bench/runplan-overhead.js: at exit, the process the bench started
// itself (its parent is the bench: BENCH_SELF_USAGE_PARENT) writes its own CPU time and
// context switches — getrusage(RUSAGE_SELF), every thread of that one process and none of its
// children — as JSON to BENCH_SELF_USAGE. What the coordinator costs alone, apart from the git
// and the task processes it runs, and less moved by other load than wall time.
'use strict';
const { writeFileSync } = require('node:fs');

const file = process.env.BENCH_SELF_USAGE;
if (file !== undefined && String(process.ppid) === process.env.BENCH_SELF_USAGE_PARENT) {
  process.on('exit', () => {
    const r = process.resourceUsage();
    writeFileSync(
      file,
      JSON.stringify({ cpuMs: (r.userCPUTime + r.systemCPUTime) / 1000, voluntary: r.voluntaryContextSwitches }),
    );
  });
}
