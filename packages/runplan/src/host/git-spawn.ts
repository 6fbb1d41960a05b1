import { spawn, type ChildProcess } from 'node:child_process';

/** git commands that can run repository hooks get this deadline (DESIGN: "git commands 5m"). */
export const GIT_DEADLINE_MS = 5 * 60_000;
export const ZERO_SHA = '0000000000000000000000000000000000000000';

/**
 * Inherited variables that would point git (ours or the agent's) at another repository,
 * index or object store — set when runplan itself runs inside a git hook. Dropped for every
 * child; `undefined` deletes a variable in both execa and settle.
 */
const REPOSITORY_POINTERS = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_COMMON_DIR',
  'GIT_NAMESPACE',
  'GIT_PREFIX',
  'GIT_QUARANTINE_PATH',
] as const;

// Environment overrides for every child runplan starts in a repository.
export function scrubbedGitEnv(extra: Record<string, string> = {}): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {};
  for (const name of REPOSITORY_POINTERS) env[name] = undefined;
  env.GIT_TERMINAL_PROMPT = '0';
  env.GIT_EDITOR = 'true';
  return { ...env, ...extra };
}

export const FULL_SHA = /^[0-9a-f]{40}$|^[0-9a-f]{64}$/;

export interface GitOutput {
  code: number;
  stdout: string;
  stderr: string;
}

/** Output a plumbing call may buffer per stream before it is stopped (execa's default). */
const PLUMBING_MAX_BUFFER = 100_000_000;
/** After the deadline's SIGTERM, SIGKILL follows this much later (execa's forceKillAfterDelay). */
const FORCE_KILL_AFTER_MS = 5_000;

/**
 * Plumbing children still running. One `exit` listener for the whole process (added with the
 * first call) sends each SIGTERM, as execa's per-call `cleanup` did: SIGINT/SIGTERM reach the
 * coordinator's own handlers and end in a normal exit, where this listener runs.
 */
const live = new Set<ChildProcess>();
let exitListener = false;
function killLive(): void {
  for (const child of live) child.kill('SIGTERM');
}

// Hook-free plumbing: one git command, never a shell, a nonzero exit returned as data.
// A plain `child_process.spawn` (no execa: its per-call option normalisation and per-call
// signal-exit listeners cost more than the git command itself): the scrubbed environment,
// the git deadline (SIGTERM, then SIGKILL 5s later), output capped at 100 MB per stream;
// a spawn failure (thrown or emitted), deadline or cap is code 128, like a git fatal error;
// the promise never rejects.
export function git(cwd: string, args: readonly string[], input?: string): Promise<GitOutput> {
  if (!exitListener) {
    exitListener = true;
    process.on('exit', killLive);
  }
  return new Promise((resolve) => {
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const [name, value] of Object.entries(scrubbedGitEnv())) {
      if (value === undefined) delete env[name];
      else env[name] = value;
    }
    let child: ChildProcess;
    try {
      // A process group (and session) of its own, as settle gives every command it runs: a
      // terminal's Ctrl-C (SIGINT to the job's process group) must reach runplan, which then
      // decides, and never kill a git command under it. One killed so would read as a failure
      // of the task (`the worktree has no HEAD commit`), not as the interruption it is. The
      // ones still running when runplan exits are ended by killLive.
      child = spawn('git', args, { cwd, env, detached: true, stdio: [input !== undefined ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
    } catch (e) {
      // Refused before any process exists (an argument with a NUL byte, from data).
      resolve({ code: 128, stdout: '', stderr: e instanceof Error ? e.message : String(e) });
      return;
    }
    live.add(child);
    const out: Buffer[] = [];
    const errs: Buffer[] = [];
    let outBytes = 0;
    let errBytes = 0;
    let failed = false;
    let forceKill: NodeJS.Timeout | undefined;
    const stop = () => {
      failed = true;
      child.kill('SIGTERM');
      // SIGKILL, and the pipes closed from our side: a grandchild still holding them must not
      // keep 'close' (and this call) from ever arriving.
      forceKill ??= setTimeout(() => {
        child.kill('SIGKILL');
        child.stdout!.destroy();
        child.stderr!.destroy();
      }, FORCE_KILL_AFTER_MS);
    };
    const deadline = setTimeout(stop, GIT_DEADLINE_MS);
    child.stdout!.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > PLUMBING_MAX_BUFFER) stop();
      else out.push(chunk);
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      errBytes += chunk.length;
      if (errBytes > PLUMBING_MAX_BUFFER) stop();
      else errs.push(chunk);
    });
    if (input !== undefined) {
      child.stdin!.on('error', () => undefined); // git may exit before reading all of it (EPIPE)
      child.stdin!.end(input);
    }
    let done = false;
    const finish = (code: number) => {
      if (done) return;
      done = true;
      live.delete(child);
      clearTimeout(deadline);
      if (forceKill !== undefined) clearTimeout(forceKill);
      resolve({
        code: failed ? 128 : code,
        stdout: stripFinalNewline(Buffer.concat(out).toString('utf8')),
        stderr: stripFinalNewline(Buffer.concat(errs).toString('utf8')),
      });
    };
    // A spawn failure (no git, no cwd) has no pid; 'close' may still follow, finish runs once.
    child.on('error', (e: NodeJS.ErrnoException) => {
      if (child.pid === undefined) {
        errs.push(Buffer.from(`${e.code ?? 'spawn_failed'}: ${e.message}`));
        finish(128);
      }
    });
    child.on('close', (code) => finish(typeof code === 'number' ? code : 128));
  });
}

// One trailing newline (LF or CRLF) removed, as git's own callers and execa strip it.
function stripFinalNewline(text: string): string {
  if (!text.endsWith('\n')) return text;
  return text.endsWith('\r\n') ? text.slice(0, -2) : text.slice(0, -1);
}
