import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { formatDuration, parseDuration } from '@runplan/common';
import { notADirectory } from '../host/dir-check.js';
import { decide } from './decide.js';
import { parseHookInput } from './input.js';
import { DEFAULT_BASH_TIMEOUT_MS, gateCommand, installGate, settingsFragment } from './install.js';

/** `runplan gate claude` options, as typed. */
export interface GateOptions {
  install?: unknown;
  project?: unknown;
  user?: unknown;
  bashTimeout?: unknown;
}

/** What the gate command talks to: only this and src/cli.ts touch the terminal. */
export interface GateIo {
  stdin: NodeJS.ReadableStream;
  say(line: string): void;
  print(line: string): void;
  /** The runplan bin that is running (named in the installed hook entry). */
  bin: string;
}

// `runplan gate claude`: the PreToolUse hook (exit 0 allow, 2 deny, never anything else),
// or with --install the settings merge. Every error, expected or not, is exit 2: for a hook
// any other code would let the tool call through.
export async function gateMain(agent: string, o: GateOptions, io: GateIo): Promise<number> {
  try {
    if (agent !== 'claude') {
      io.say(`runplan gate: usage: unknown agent "${agent}" (claude)`);
      return 2;
    }
    if (o.install !== true) {
      // Install options without --install are a mistyped install, not a hook call: said at
      // once, instead of waiting on a terminal for hook input or calling it bad JSON.
      const stray = (['project', 'user', 'bashTimeout'] as const).filter((k) => o[k] !== undefined && o[k] !== false);
      if (stray.length > 0) {
        const flags = stray.map((k) => (k === 'bashTimeout' ? '--bash-timeout' : `--${k}`)).join(', ');
        io.say(`runplan gate: usage: ${flags} only go with --install`);
        io.say('  hint: runplan gate claude --install [--project DIR | --user] [--bash-timeout DUR]');
        return 2;
      }
    }
    return o.install === true ? await install(o, io) : await hook(io);
  } catch (e) {
    io.say(`runplan gate: gate_error: ${e instanceof Error ? e.message : String(e)}; the call is denied (the gate fails closed)`);
    return 2;
  }
}

async function hook(io: GateIo): Promise<number> {
  const input = parseHookInput(await readAll(io.stdin), process.cwd());
  if (!input.ok) {
    io.say(`runplan gate: bad_input: ${input.message}; the call is denied (the gate fails closed)`);
    return 2;
  }
  const decision = await decide(input.value);
  if (decision.kind === 'allow') return 0;
  io.say(`runplan gate: ${decision.reason}: ${decision.message}`);
  io.say(`  hint: ${decision.hint}`);
  return 2;
}

async function install(o: GateOptions, io: GateIo): Promise<number> {
  const ms = o.bashTimeout === undefined ? DEFAULT_BASH_TIMEOUT_MS : parseDuration(String(o.bashTimeout));
  if (ms === undefined || ms <= 0) {
    io.say(`runplan gate: usage: --bash-timeout ${String(o.bashTimeout)}: not a duration (30m, 2h, 24h)`);
    return 2;
  }
  if (o.project === true) {
    io.say('runplan gate: usage: --project needs a directory');
    return 2;
  }
  if (typeof o.project === 'string' && o.user === true) {
    io.say('runplan gate: usage: --project and --user exclude each other');
    return 2;
  }
  // A mistyped project is not made up: only its `.claude` directory is created.
  if (typeof o.project === 'string' && (await notADirectory(resolve(o.project))) !== undefined) {
    io.say(`runplan gate: usage: --project ${resolve(o.project)}: no such directory`);
    return 2;
  }
  const settings = { command: gateCommand(process.execPath, resolve(io.bin)), bashTimeoutMs: ms };
  const file =
    typeof o.project === 'string'
      ? join(resolve(o.project), '.claude', 'settings.json')
      : o.user === true
        ? join(process.env.HOME ?? homedir(), '.claude', 'settings.json')
        : undefined;
  if (file === undefined) {
    io.print(JSON.stringify(settingsFragment(settings), null, 2));
    io.say('runplan gate: merge this into .claude/settings.json (or pass --project DIR / --user to have it merged)');
    return 0;
  }
  const end = await installGate(file, settings);
  if (end.kind === 'unreadable') {
    io.say(`runplan gate: settings_unreadable: ${end.file}: ${end.message}; left untouched`);
    return 2;
  }
  for (const k of end.kept)
    io.say(
      `runplan gate: kept: ${end.file}: ${k.key} = ${k.ms} (${formatDuration(k.ms)}), larger than --bash-timeout ${formatDuration(ms)}; not lowered`,
    );
  io.say(`runplan gate: ${end.changed ? 'installed' : 'already installed'}: ${end.file}`);
  return 0;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}
