// Shared by the Slurm tests: they run on a real cluster (scripts/slurm-local.sh up), never skip.
import { spawnSync } from 'node:child_process';
import * as assert from 'uvu/assert';
import { runTagPrefix } from '../src/index.js';
import { mockPlan, runIds, withPlan, type Fixture, type MockPlan, type PlanFixtureOptions } from './support.js';

// squeue/sinfo/scancel, synchronously and bounded.
export function slurmCli(argv: string[]): { ok: boolean; stdout: string; stderr: string } {
  const r = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8', timeout: 20_000 });
  return { ok: r.status === 0, stdout: r.stdout ?? '', stderr: r.stderr ?? String(r.error ?? '') };
}

// Fails (never skips) when no cluster answers, saying how to start one.
export function requireCluster(): void {
  const r = slurmCli(['sinfo', '--noheader', '--format=%T']);
  const states = r.stdout
    .trim()
    .split('\n')
    .filter((s) => s !== '');
  // A node still finishing the last test's job (`completing`) or held for a pending one (`planned`) is up too; `*` means it does not answer.
  if (!r.ok || !states.some((s) => /^(idle|mixed|allocated|completing|planned)(?!\*)/.test(s))) {
    throw new Error(
      `the Slurm tests need a running cluster: run scripts/slurm-local.sh up (as root) first (sinfo said: ${(r.stderr || r.stdout).trim() || 'nothing'})`,
    );
  }
}

// Jobs in the queue (pending, running, completing) whose name starts with `prefix`.
export function queued(prefix: string): string[] {
  const r = slurmCli(['squeue', '--noheader', '--format=%i|%j']);
  assert.ok(r.ok, `squeue: ${r.stderr}`);
  return r.stdout
    .split('\n')
    .map((l) => l.trim().split('|'))
    .filter(([id, name]) => id !== undefined && id !== '' && (name ?? '').startsWith(prefix))
    .map(([id]) => id!);
}

// A job's state as the controller keeps it (MinJobAge after its end).
export function jobState(jobId: string): string {
  const r = slurmCli(['scontrol', '--oneliner', 'show', 'job', jobId]);
  return /JobState=(\S+)/.exec(r.stdout)?.[1] ?? `unknown (${r.stderr.trim()})`;
}

/**
 * How long a test's jobs may wait for the one test node behind other work (a second test
 * suite on the same host shares the cluster): added to every Slurm test's bound.
 */
export const SLURM_QUEUE_MS = 180_000;
const SHARED_NODE_MS = SLURM_QUEUE_MS;

/** The bound of one `runplan run` in a Slurm test: its jobs (and the workdir probe) may queue too. */
export const SLURM_RUN_MS = 120_000 + SLURM_QUEUE_MS;

// A Slurm test over a fixture repo: the cluster must answer first; afterwards no job of the
// fixture's runs may be left in the queue (checked, then cancelled so the next test starts clean).
export function withSlurmPlan(plan: string, opts: PlanFixtureOptions, body: (f: Fixture) => Promise<void>): () => Promise<void> {
  return withPlan(plan, { ...opts, timeoutMs: (opts.timeoutMs ?? 120_000) + SHARED_NODE_MS }, async (f) => {
    requireCluster();
    let failure: unknown;
    try {
      await body(f);
    } catch (e) {
      failure = e;
    }
    const slugs = new Set([...plan.matchAll(/^slug = "([^"]+)"/gm)].map((m) => m[1]!));
    const left = [...slugs].flatMap((slug) => runIds(f.repo, slug).flatMap((id) => queued(runTagPrefix(id))));
    if (left.length > 0) slurmCli(['scancel', ...left]);
    if (failure !== undefined) throw failure;
    assert.equal(left, [], `jobs of the test left in the queue: ${left.join(' ')}`);
  });
}

// A mockPlan run by the slurm executor: `executor` holds the [executor] lines after
// `kind = "slurm"`, and `defaults` only what is given (no deadline, no grace).
export function slurmPlan(p: MockPlan): string {
  return mockPlan({ ...p, executor: ['kind = "slurm"', ...(p.executor ?? [])], defaults: p.defaults ?? [] });
}
