import { closeSync, fstatSync, openSync, statSync } from 'node:fs';
import type { PromptSource } from './input.js';
import type { SettleSpec, TransportError } from './types.js';

/** What must be true before anything is spawned: the cwd exists, the input file opens. */
export type Preflight = { ok: true; prompt: PromptSource | undefined } | { ok: false; error: TransportError };

// Checks the cwd and opens the input, so both failures are spawn_failed and nothing runs.
export function preflight(spec: SettleSpec): Preflight {
  if (spec.cwd !== undefined) {
    const problem = cwdProblem(spec.cwd);
    if (problem) return { ok: false, error: problem };
  }
  const input = spec.input;
  if (input === undefined || input === 'inherit') return { ok: true, prompt: undefined };
  // An empty prompt is no pipe: the child's stdin is /dev/null, the same immediate EOF,
  // without a close of ours that can race the child's exit into an EPIPE.
  if (typeof input === 'string') return { ok: true, prompt: input === '' ? undefined : { kind: 'bytes', bytes: Buffer.from(input) } };
  if (Buffer.isBuffer(input)) return { ok: true, prompt: input.length === 0 ? undefined : { kind: 'bytes', bytes: input } };
  // A plain Uint8Array (what execa's `input` also takes): its bytes, not copied.
  if (input instanceof Uint8Array) {
    const bytes = Buffer.from(input.buffer, input.byteOffset, input.byteLength);
    return { ok: true, prompt: bytes.length === 0 ? undefined : { kind: 'bytes', bytes } };
  }
  let fd: number;
  try {
    fd = openSync(input.file, 'r');
  } catch (cause) {
    const code = codeOf(cause) ?? 'EIO';
    return { ok: false, error: { code, where: 'input', message: `cannot open input ${input.file}: ${code}`, cause } };
  }
  if (fstatSync(fd).isDirectory()) {
    closeSync(fd);
    return { ok: false, error: { code: 'EISDIR', where: 'input', message: `input ${input.file} is a directory` } };
  }
  return { ok: true, prompt: { kind: 'file', fd, path: input.file } };
}

function cwdProblem(cwd: string): TransportError | undefined {
  try {
    if (statSync(cwd).isDirectory()) return undefined;
    return { code: 'ENOTDIR', where: 'cwd', message: `cwd ${cwd} is not a directory` };
  } catch (cause) {
    const code = codeOf(cause) ?? 'ENOENT';
    return { code, where: 'cwd', message: `cwd ${cwd} does not exist (${code})`, cause };
  }
}

// Closes an input file we opened but will not stream (the spawn failed).
export function releasePrompt(prompt: PromptSource | undefined): void {
  if (prompt?.kind === 'file') {
    try {
      closeSync(prompt.fd);
    } catch {
      // already closed
    }
  }
}

export function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
