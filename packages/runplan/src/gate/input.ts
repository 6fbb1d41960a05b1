import { isAbsolute, join } from 'node:path';
import { isPlainObject } from '@runplan/common';

/** The parts of a Claude Code PreToolUse hook input the gate decides on. */
export interface HookInput {
  toolName: string;
  /** Where the tool runs: relative paths in the command are resolved here. */
  cwd: string;
  /** Bash: the command line. */
  command: string | undefined;
  /** Bash: the tool's own background mode (`run_in_background`). */
  runInBackground: boolean;
  /** Read / Grep / Glob: the paths the tool would read. */
  paths: string[];
}

export type InputResult = { ok: true; value: HookInput } | { ok: false; message: string };

// Reads the hook's stdin text; anything that is not the expected JSON object is an error (a denial).
export function parseHookInput(text: string, fallbackCwd: string): InputResult {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    return { ok: false, message: `hook input is not JSON: ${(e as Error).message}` };
  }
  if (!isPlainObject(json)) return { ok: false, message: 'hook input is not a JSON object' };
  const { tool_name: toolName, tool_input: toolInput, cwd } = json;
  if (typeof toolName !== 'string') return { ok: false, message: 'hook input: tool_name is not a string' };
  if (toolInput !== undefined && !isPlainObject(toolInput)) return { ok: false, message: 'hook input: tool_input is not an object' };
  if (cwd !== undefined && typeof cwd !== 'string') return { ok: false, message: 'hook input: cwd is not a string' };
  const tool = (toolInput ?? {}) as Record<string, unknown>;
  const command = tool.command;
  if (toolName === 'Bash' && typeof command !== 'string') return { ok: false, message: 'hook input: tool_input.command is not a string' };
  // Glob's pattern is a path too (`/repo/.git/runplan/**`), read under its `path` when it has
  // one (`runplan/**` in `/repo/.git`); Grep's is a regular expression.
  const keys = ['file_path', 'path', 'notebook_path'];
  const paths = keys.map((k) => tool[k]).filter((p): p is string => typeof p === 'string');
  const { pattern, path } = tool;
  if (toolName === 'Glob' && typeof pattern === 'string')
    paths.push(typeof path === 'string' && !isAbsolute(pattern) ? join(path, pattern) : pattern);
  return {
    ok: true,
    value: {
      toolName,
      cwd: cwd ?? fallbackCwd,
      command: typeof command === 'string' ? command : undefined,
      runInBackground: tool.run_in_background === true,
      paths,
    },
  };
}
