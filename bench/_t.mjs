import { spawn, spawnSync } from 'node:child_process';
import { execa } from 'execa';
const N = 100;
const time = async (label, fn) => { const t = performance.now(); await fn(); console.log(label.padEnd(40), ((performance.now() - t) / N).toFixed(2), 'ms/spawn'); };
for (let k = 0; k < 2; k++) {
await time('sh loop of /bin/true', () => spawnSync('sh', ['-c', `i=0; while [ $i -lt ${N} ]; do /bin/true; i=$((i+1)); done`]));
await time('node spawn+exit (async)', async () => { for (let i = 0; i < N; i++) await new Promise((r) => spawn('/bin/true', [], { stdio: 'ignore' }).on('exit', r)); });
await time('node spawn pipes + close', async () => { for (let i = 0; i < N; i++) await new Promise((r) => { const c = spawn('/bin/true', [], { stdio: ['ignore','pipe','pipe'] }); c.stdout.resume(); c.stderr.resume(); c.on('close', r); }); });
await time('execa default', async () => { for (let i = 0; i < N; i++) await execa('/bin/true'); });
await time('execa cleanup:false stdin ignore', async () => { for (let i = 0; i < N; i++) await execa('/bin/true', { cleanup: false, stdin: 'ignore' }); });
}
console.log('rss MB', (process.memoryUsage().rss / 2**20).toFixed(0));
