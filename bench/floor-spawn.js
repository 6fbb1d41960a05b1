// What the two node floors (runplan-node-floor.js, runplan-parallel-node-floor.js) spawn
// with: plain child_process.spawn, no shell, stdout collected.
import { spawn } from 'node:child_process';

// One child in `cwd`, stdout collected; rejects on a nonzero exit unless `allow` lists the code.
export function run1(file, args, { cwd, allow = [] }) {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c) => (out += c));
    child.stderr.resume();
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 || allow.includes(code) ? resolve({ code, out }) : reject(new Error(`${file} ${args[0]}: exit ${code}`)),
    );
  });
}
