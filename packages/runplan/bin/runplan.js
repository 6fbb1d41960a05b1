#!/usr/bin/env node
// Committed shim: the built CLI decides the exit code; this file only loads it. Loading can
// fail (dist not built, a broken install): as a hook (`runplan gate …`) that must deny, never
// exit 1 — Claude Code reads 1 as "allow".
let cli;
try {
  cli = await import('../dist/lib/cli.js');
} catch (e) {
  process.stderr.write(`runplan: cannot load the built CLI (${e instanceof Error ? e.message : String(e)})\n  hint: npm run build\n`);
  process.exit(process.argv[2] === 'gate' ? 2 : 1);
}
process.exitCode = await cli.main(process.argv.slice(2));
