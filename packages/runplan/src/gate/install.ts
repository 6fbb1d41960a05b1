import { mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { isPlainObject } from '@runplan/common';

/** The tools the gate is asked about: Bash (launches, probes) and the file readers (state reads). */
export const GATE_MATCHER = 'Bash|Read|Grep|Glob';

/** Claude Code's default Bash timeout would kill a foreground run after 2 minutes; the gate raises it. */
export const DEFAULT_BASH_TIMEOUT_MS = 24 * 60 * 60_000;

/** What `--install` merges into a settings file. */
export interface GateSettings {
  /** The shell command Claude Code runs: the absolute node and bin of the runplan that installed it. */
  command: string;
  bashTimeoutMs: number;
}

/** The Bash timeouts `--install` sets: it never lowers one the user set larger (those are `kept`). */
export const BASH_TIMEOUT_KEYS = ['BASH_DEFAULT_TIMEOUT_MS', 'BASH_MAX_TIMEOUT_MS'] as const;

export type InstallEnd =
  | { kind: 'written'; file: string; changed: boolean; kept: Array<{ key: string; ms: number }> }
  | { kind: 'unreadable'; file: string; message: string };

// The hook command for a node binary and runplan bin, quoted for the shell Claude Code runs it with.
export function gateCommand(node: string, bin: string): string {
  return [node, bin, 'gate', 'claude'].map(shellQuote).join(' ');
}

function shellQuote(word: string): string {
  return /^[A-Za-z0-9_./@:+=-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

// The settings fragment `--install` merges (and prints without --project/--user).
export function settingsFragment(s: GateSettings): Record<string, unknown> {
  return {
    hooks: { PreToolUse: [hookEntry(s)] },
    env: { BASH_DEFAULT_TIMEOUT_MS: String(s.bashTimeoutMs), BASH_MAX_TIMEOUT_MS: String(s.bashTimeoutMs) },
  };
}

function hookEntry(s: GateSettings): Record<string, unknown> {
  return { matcher: GATE_MATCHER, hooks: [{ type: 'command', command: s.command, timeout: 30 }] };
}

// Whether a hook command is a runplan gate (this install's or an older one's at another path).
function isGateCommand(command: unknown): boolean {
  return typeof command === 'string' && /runplan(\.js)?'? gate claude$/.test(command);
}

// Merges the gate's hook entry and the Bash timeouts into a settings.json (created when
// missing); other keys are kept, a second install changes nothing, an older gate entry is
// replaced. A file that is not a JSON object (or whose `hooks`/`env` are not objects) is left untouched.
export async function installGate(file: string, s: GateSettings): Promise<InstallEnd> {
  let text: string | undefined;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') return { kind: 'unreadable', file, message: (e as Error).message };
  }
  let settings: Record<string, unknown> = {};
  if (text !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      return { kind: 'unreadable', file, message: `not JSON: ${(e as Error).message}` };
    }
    if (!isPlainObject(parsed)) return { kind: 'unreadable', file, message: 'not a JSON object' };
    settings = parsed;
  }
  const hooks = settings.hooks ?? {};
  const env = settings.env ?? {};
  if (!isPlainObject(hooks)) return { kind: 'unreadable', file, message: '`hooks` is not an object' };
  if (!isPlainObject(env)) return { kind: 'unreadable', file, message: '`env` is not an object' };
  const pre = hooks.PreToolUse ?? [];
  if (!Array.isArray(pre)) return { kind: 'unreadable', file, message: '`hooks.PreToolUse` is not an array' };
  const others = pre.filter(
    (entry) =>
      !(isPlainObject(entry) && Array.isArray(entry.hooks) && entry.hooks.some((h) => isPlainObject(h) && isGateCommand(h.command))),
  );
  const timeouts: Record<string, string> = {};
  const kept: Array<{ key: string; ms: number }> = [];
  for (const key of BASH_TIMEOUT_KEYS) {
    const ms = timeoutMs(env[key]);
    if (ms !== undefined && ms > s.bashTimeoutMs) kept.push({ key, ms });
    else timeouts[key] = String(s.bashTimeoutMs);
  }
  const merged = { ...settings, hooks: { ...hooks, PreToolUse: [...others, hookEntry(s)] }, env: { ...env, ...timeouts } };
  const next = JSON.stringify(merged, null, 2) + '\n';
  if (next === text) return { kind: 'written', file, changed: false, kept };
  await mkdir(dirname(file), { recursive: true });
  await writeFileAtomic(file, next);
  return { kind: 'written', file, changed: true, kept };
}

// A settings env timeout as Claude Code reads it (milliseconds, a string or a number), or undefined.
function timeoutMs(value: unknown): number | undefined {
  const ms = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value;
  return typeof ms === 'number' && Number.isSafeInteger(ms) && ms > 0 ? ms : undefined;
}
