import { parseDuration } from '@runplan/common';
import { checkTemplate } from '@runplan/workdir';
import type { Tier } from '@runplan/workdir';
import type { PlanProblem } from './types.js';
import { parseSize } from '../host/disk.js';

/** A parsed TOML/JSON table. */
export type Table = Record<string, unknown>;

export function isTable(value: unknown): value is Table {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

// `tasks[2]` / `defaults.deadline`: how a problem names where it is.
export function keyPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  return parent === '' ? key : `${parent}.${key}`;
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (value instanceof Date) return 'a date';
  if (typeof value === 'object') return 'a table';
  if (typeof value === 'number')
    return Number.isNaN(value)
      ? 'nan'
      : !Number.isFinite(value)
        ? String(value).replace('Infinity', 'inf')
        : Number.isInteger(value)
          ? 'an integer'
          : 'a float';
  return `a ${typeof value}`;
}

// Levenshtein distance, for "did you mean".
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length]!;
}

/**
 * Reads typed values out of a parsed plan and collects every problem instead of stopping
 * at the first. Each accessor returns undefined when the key is absent or wrong (and then
 * a problem names the key path), so callers fall back to defaults and keep validating.
 */
export class PlanReader {
  readonly problems: PlanProblem[] = [];

  problem(path: string, reason: string, message: string): void {
    this.problems.push({ path, reason, message });
  }

  // Flags every key of `table` not in `allowed`.
  keys(table: Table, allowed: readonly string[], path: string): void {
    for (const key of Object.keys(table)) {
      if (allowed.includes(key)) continue;
      const near = allowed.filter((k) => distance(k, key) <= 2).sort((a, b) => distance(a, key) - distance(b, key))[0];
      this.problem(
        keyPath(path, key),
        'unknown_key',
        `unknown key ${JSON.stringify(key)}${near ? ` (did you mean ${JSON.stringify(near)}?)` : ''}`,
      );
    }
  }

  private wrong(path: string, value: unknown, expected: string): undefined {
    this.problem(path, 'wrong_type', `must be ${expected}, not ${typeName(value)}`);
    return undefined;
  }

  table(value: unknown, path: string): Table | undefined {
    if (value === undefined) return undefined;
    return isTable(value) ? value : this.wrong(path, value, 'a table');
  }

  boolean(value: unknown, path: string): boolean | undefined {
    if (value === undefined) return undefined;
    return typeof value === 'boolean' ? value : this.wrong(path, value, 'a boolean');
  }

  string(value: unknown, path: string): string | undefined {
    if (value === undefined) return undefined;
    return typeof value === 'string' ? value : this.wrong(path, value, 'a string');
  }

  // An integer >= min (1 for counts, 0 for caps).
  integer(value: unknown, path: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
    if (value === undefined) return undefined;
    if (typeof value !== 'number' || !Number.isInteger(value)) return this.wrong(path, value, 'an integer');
    if (value < min || value > max) {
      // Past the safe integers (a float like 1e300 is an integer to JS) the bound crossed is the upper one.
      const bound = max !== Number.MAX_SAFE_INTEGER ? `${min}..${max}` : value < min ? `at least ${min}` : `at most ${max}`;
      this.problem(path, 'out_of_range', `must be ${bound}, not ${value}`);
      return undefined;
    }
    return value;
  }

  positiveNumber(value: unknown, path: string): number | undefined {
    if (value === undefined) return undefined;
    if (typeof value !== 'number' || !Number.isFinite(value)) return this.wrong(path, value, 'a finite number');
    if (value <= 0) {
      this.problem(path, 'out_of_range', `must be greater than 0, not ${value}`);
      return undefined;
    }
    return value;
  }

  // A duration (`500ms`, `30s`, `10m`, `2h`); `off` only where allowOff says so.
  duration(value: unknown, path: string, opts: { allowZero?: boolean; allowOff?: boolean } = {}): number | 'off' | undefined {
    if (value === undefined) return undefined;
    if (typeof value !== 'string') return this.wrong(path, value, 'a duration string like "30s"');
    if (opts.allowOff && value.trim() === 'off') return 'off';
    const ms = parseDuration(value);
    if (ms === undefined) {
      this.problem(
        path,
        'bad_duration',
        `${JSON.stringify(value)} is not a duration (use 500ms, 30s, 10m or 2h${opts.allowOff ? ', or "off"' : ''})`,
      );
      return undefined;
    }
    if (ms === 0 && !opts.allowZero) {
      this.problem(path, 'bad_duration', `must be longer than 0${opts.allowOff ? ' (use "off" to disable)' : ''}`);
      return undefined;
    }
    return ms;
  }

  // A size in bytes: an integer, or a string with a unit ("1GiB", "500MiB", "64KiB", "2GB").
  size(value: unknown, path: string): number | undefined {
    if (value === undefined) return undefined;
    if (typeof value !== 'string' && typeof value !== 'number') return this.wrong(path, value, 'a size like "1GiB" or a number of bytes');
    const bytes = parseSize(value);
    if (bytes === undefined) this.problem(path, 'bad_size', `${JSON.stringify(value)} is not a size (use bytes, or 500MiB, 1GiB, 2GB)`);
    return bytes;
  }

  oneOf<T extends string>(value: unknown, path: string, allowed: readonly T[]): T | undefined {
    const text = this.string(value, path);
    if (text === undefined) return undefined;
    if ((allowed as readonly string[]).includes(text)) return text as T;
    this.problem(path, 'bad_value', `${JSON.stringify(text)} is not one of ${allowed.join(', ')}`);
    return undefined;
  }

  stringList(value: unknown, path: string): string[] | undefined {
    if (value === undefined) return undefined;
    if (!Array.isArray(value)) return this.wrong(path, value, 'an array of strings');
    let good = true;
    value.forEach((item, i) => {
      if (typeof item !== 'string') good = this.wrong(keyPath(path, i), item, 'a string') ?? false;
    });
    return good ? (value as string[]) : undefined;
  }

  // An argv template: a non-empty array of strings, each element a template valid in `tier`.
  argv(value: unknown, path: string, tier: Tier): string[] | undefined {
    const argv = this.stringList(value, path);
    if (argv === undefined) return undefined;
    if (argv.length === 0) {
      this.problem(path, 'empty_argv', 'must name a program (an empty argv runs nothing)');
      return undefined;
    }
    if (argv[0]!.trim() === '') {
      this.problem(keyPath(path, 0), 'empty_argv', 'the program name is empty');
      return undefined;
    }
    let good = true;
    argv.forEach((element, i) => {
      const checked = checkTemplate(element, tier);
      if (element.includes('\0')) {
        // No argv can carry one: it passed validate and each attempt failed spawn_failed (class environment).
        this.problem(keyPath(path, i), 'nul_byte', 'holds a NUL byte, which no program argument can carry');
        good = false;
      } else if (!checked.ok) {
        this.problem(keyPath(path, i), checked.error.reason, checked.error.message);
        good = false;
      } else if (checked.value.variables.includes('event.file')) {
        // run-hook's tiers know {{event.file}}; runplan has no event to fill it with.
        this.problem(keyPath(path, i), 'missing_value', '{{event.file}} has no value in a plan (runplan runs no event hooks)');
        good = false;
      }
    });
    return good ? argv : undefined;
  }

  argvList(value: unknown, path: string, tier: Tier): string[][] | undefined {
    if (value === undefined) return undefined;
    if (!Array.isArray(value)) return this.wrong(path, value, 'an array of argv arrays');
    const lists: string[][] = [];
    let good = true;
    value.forEach((item, i) => {
      const argv = this.argv(item, keyPath(path, i), tier);
      if (argv) lists.push(argv);
      else good = false;
    });
    return good ? lists : undefined;
  }
}
