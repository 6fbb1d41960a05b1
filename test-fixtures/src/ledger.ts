import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** One dispatch of the mock agent, as it recorded itself in $MOCK_LEDGER. */
export interface LedgerEntry {
  task: string;
  attempt: number;
  pid: number;
}

// The dispatches recorded in a mock-agent ledger, in order. A missing file is no
// dispatch at all (the agent creates the file on its first run).
export function readLedger(file: string): LedgerEntry[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [task, attempt, pid] = line.trim().split(/\s+/);
      return { task: task ?? '', attempt: Number(attempt), pid: Number(pid) };
    });
}

/** How many times each task was dispatched. */
export function dispatchCounts(file: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const { task } of readLedger(file)) counts.set(task, (counts.get(task) ?? 0) + 1);
  return counts;
}

/** How many times each label ran in a $MOCK_GATE_LEDGER (mock-gate `--label`, `verify`). */
export function gateCounts(file: string): Map<string, number> {
  const counts = new Map<string, number>();
  if (!existsSync(file)) return counts;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const label = line.trim().split(/\s+/)[0];
    if (label) counts.set(label, (counts.get(label) ?? 0) + 1);
  }
  return counts;
}

/** Grandchildren the mock agent spawned, from $MOCK_PIDS (`TASK ATTEMPT grandchild PID`). */
export function readPids(file: string): { task: string; attempt: number; role: string; pid: number }[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [task, attempt, role, pid] = line.trim().split(/\s+/);
      return { task: task ?? '', attempt: Number(attempt), role: role ?? '', pid: Number(pid) };
    });
}

// The prompts a task received, in dispatch order, from $MOCK_PROMPTS (files TASK.N.txt).
export function savedPrompts(dir: string, task: string): string[] {
  if (!existsSync(dir)) return [];
  const prefix = `${task}.`;
  return readdirSync(dir)
    .filter((name) => name.startsWith(prefix) && /^\d+\.txt$/.test(name.slice(prefix.length)))
    .map((name) => ({ name, n: Number(name.slice(prefix.length, -'.txt'.length)) }))
    .sort((a, b) => a.n - b.n)
    .map(({ name }) => readFileSync(join(dir, name), 'utf8'));
}

/** One `--env NAME` record of mock-gate in $MOCK_GATE_ENV; `value` undefined = unset. */
export interface GateEnvEntry {
  label: string;
  name: string;
  value: string | undefined;
}

// What environment each mock-gate run (gate or hook) saw, from $MOCK_GATE_ENV.
export function readGateEnv(file: string): GateEnvEntry[] {
  if (!existsSync(file)) return [];
  const entries: GateEnvEntry[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const match = /^(\S+) ([A-Za-z_][A-Za-z0-9_]*)(?:=(.*)| unset)$/.exec(line);
    if (match) entries.push({ label: match[1]!, name: match[2]!, value: match[3] });
  }
  return entries;
}
