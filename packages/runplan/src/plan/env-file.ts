import { err, ok } from '@runplan/common';
import type { Result } from '@runplan/common';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function isEnvName(name: string): boolean {
  return ENV_NAME.test(name);
}

/**
 * Parses an env file: `KEY=VALUE` lines, optional `export ` prefix, `#` comments, blank
 * lines; a value wrapped in matching single or double quotes loses them. The error names
 * the line number only, never its content: the content is a secret.
 */
export function parseEnvFile(text: string): Result<Record<string, string>, { line: number; message: string }> {
  const values: Record<string, string> = {};
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/\r$/, '');
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const body = trimmed.startsWith('export ') ? trimmed.slice('export '.length).trimStart() : trimmed;
    const eq = body.indexOf('=');
    if (eq <= 0) return err({ line: i + 1, message: `line ${i + 1} is not KEY=VALUE` });
    const name = body.slice(0, eq).trim();
    if (!isEnvName(name)) return err({ line: i + 1, message: `line ${i + 1}: the name is not a valid variable name` });
    let value = body.slice(eq + 1).trim();
    const quote = value[0];
    if ((quote === '"' || quote === "'") && value.length >= 2 && value.endsWith(quote)) value = value.slice(1, -1);
    else if (quote === '"' || quote === "'") return err({ line: i + 1, message: `line ${i + 1}: unterminated quote` });
    // No environment variable can carry one: it passed validate and every attempt failed spawn_failed.
    if (value.includes('\0')) return err({ line: i + 1, message: `line ${i + 1}: the value holds a NUL byte` });
    values[name] = value;
  }
  return ok(values);
}
