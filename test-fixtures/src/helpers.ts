import { spawn } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');
const repoRoot = join(root, '..');

// Absolute path of a file in test-fixtures/ (e.g. `fixture('sh/ignore-term.sh')`).
export function fixture(relative: string): string {
  return join(root, relative);
}

// Absolute path of one of the shared POSIX sh fixtures in test-fixtures/sh/.
export function shFixture(name: string): string {
  return join(root, 'sh', name);
}

// Absolute path of a tool's committed bin shim, e.g. binPath('settle').
export function binPath(tool: 'settle' | 'workdir' | 'journal' | 'run-hook' | 'runplan'): string {
  return join(repoRoot, 'packages', tool, 'bin', `${tool}.js`);
}

export interface TempDir {
  path: string;
  cleanup(): void;
}

// A fresh real-path temp dir; call cleanup() in a finally (or use the returned path with after()).
export function tempDir(prefix = 'runplan-test-'): TempDir {
  const path = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) };
}

export interface BinResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  stdoutBytes: Buffer;
  pid: number;
}

export interface RunBinOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  input?: string | Buffer;
  /** Kill the bin (SIGKILL) and reject when it has not exited by then. Default 60s. */
  timeoutMs?: number;
  /** Called once the child is spawned (e.g. to signal it from the test). */
  onSpawn?: (pid: number) => void;
}

// Runs a node bin (or any argv) as a real child process and collects everything it printed.
export function runBin(bin: string, args: string[], options: RunBinOptions = {}): Promise<BinResult> {
  const argv = bin.endsWith('.js') ? [process.execPath, bin, ...args] : [bin, ...args];
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.stdin.on('error', () => {});
    if (options.input !== undefined) child.stdin.end(options.input);
    else child.stdin.end();
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`runBin: ${argv.join(' ')} did not exit within ${options.timeoutMs ?? 60_000}ms`));
    }, options.timeoutMs ?? 60_000);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    if (child.pid !== undefined) options.onSpawn?.(child.pid);
    child.on('close', (exitCode, signal) => {
      clearTimeout(timer);
      const stdoutBytes = Buffer.concat(out);
      resolve({
        exitCode,
        signal,
        stdout: stdoutBytes.toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        stdoutBytes,
        pid: child.pid ?? -1,
      });
    });
  });
}

// Parses JSON Lines (blank lines ignored); throws naming the line that is not JSON.
export function parseJsonLines(text: string): unknown[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line, i) => {
      try {
        return JSON.parse(line) as unknown;
      } catch {
        throw new Error(`line ${i + 1} is not JSON: ${line.slice(0, 200)}`);
      }
    });
}

// Wraps an async test body with a timeout (uvu has none of its own).
export function withTimeout<T>(ms: number, body: () => Promise<T>): () => Promise<T> {
  return () =>
    new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`test timed out after ${ms}ms`)), ms);
      body().then(
        (v) => {
          clearTimeout(timer);
          resolve(v);
        },
        (e: unknown) => {
          clearTimeout(timer);
          reject(e instanceof Error ? e : new Error(String(e)));
        },
      );
    });
}
