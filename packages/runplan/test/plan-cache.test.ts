// The plan cache through the real bin: `run` keeps the plan it validated under the state
// root (.plan-cache/), and the next `run` of the same plan takes it from there — but only
// while the plan file, every file it names and the build are those it was made from, and
// its checksum holds. Each test forges a cache that runs another command than the plan
// says (it makes forged.txt instead of a.txt), so which of the two ran shows whether it was
// taken. A plan with a secret in it is never cached; RUNPLAN_PLAN_CACHE=0 turns it off.
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { envWithAgents, gitRepo, tempDir, type GitRepo } from '@runplan/test-fixtures';
import { KEPT_PLAN_CACHES } from '../src/plan/cache.js';
import { runplan } from './support.js';

interface Cached {
  repo: GitRepo;
  plan: string;
  prompt: string;
  state: string;
  env: Record<string, string>;
}

const PLAN = `slug = "cached"
base = "main"
[defaults]
command = ["sh", "-c", 'cat >/dev/null && touch "$1"', "sh", "{{task.id}}.txt"]
format = "text"
deadline = "1m"
[[tasks]]
id = "a"
prompt_file = "prompts/a.md"
`;

function withCachedPlan(body: (c: Cached) => Promise<void>, plan = PLAN): () => Promise<void> {
  return async () => {
    const repo = gitRepo();
    const state = tempDir('runplan-state-');
    try {
      mkdirSync(join(repo.path, 'prompts'));
      const prompt = join(repo.path, 'prompts', 'a.md');
      writeFileSync(prompt, 'make a.txt\n');
      const file = join(repo.path, 'plan.toml');
      writeFileSync(file, plan);
      await body({ repo, plan: file, prompt, state: state.path, env: envWithAgents({}) });
    } finally {
      repo.cleanup();
      state.cleanup();
    }
  };
}

const run = (c: Cached, extra: string[] = [], env: Record<string, string> = {}) =>
  runplan(['run', c.plan, '--state-dir', c.state, ...extra], { env: { ...c.env, ...env } });

function cacheFiles(c: Cached): string[] {
  const dir = join(c.state, '.plan-cache');
  return existsSync(dir) ? readdirSync(dir).map((n) => join(dir, n)) : [];
}

// Rewrites the one cache file: the task makes forged.txt; `meta` edits the meta line;
// with `corrupt` the checksum is left as it was (so it no longer holds).
function forge(c: Cached, opts: { meta?: (m: Record<string, unknown>) => void; corrupt?: boolean } = {}): void {
  const [path] = cacheFiles(c);
  assert.ok(path, 'a cache to forge');
  const bytes = readFileSync(path);
  const nl = bytes.indexOf(0x0a);
  const meta = JSON.parse(bytes.toString('utf8', 0, nl)) as Record<string, unknown>;
  const end = nl + 1 + (meta.payloadBytes as number);
  const payload = JSON.parse(bytes.toString('utf8', nl + 1, end)) as { plan: { tasks: Array<{ command: string[] }> } };
  payload.plan.tasks[0]!.command = ['sh', '-c', 'cat >/dev/null && touch forged.txt'];
  // The payload, then the plan.json text as it was.
  const after = Buffer.concat([Buffer.from(JSON.stringify(payload), 'utf8'), bytes.subarray(end)]);
  if (!opts.corrupt) {
    meta.payloadCrc = crc32(after);
    meta.payloadBytes = after.length - (meta.copyBytes as number);
  }
  opts.meta?.(meta);
  writeFileSync(path, Buffer.concat([Buffer.from(`${JSON.stringify(meta)}\n`), after]));
}

// The .txt files on runplan/cached after a run (the repo's own README.md is there too).
const tree = (c: Cached): string[] =>
  c.repo
    .git(['ls-tree', '--name-only', 'runplan/cached'])
    .split('\n')
    .filter((n) => n.endsWith('.txt'))
    .sort();

test(
  'run writes the cache (0600 in a 0700 dir, not taken for a slug by report); the next run takes it',
  withCachedPlan(async (c) => {
    const first = await run(c);
    assert.is(first.exitCode, 0, first.stderr);
    assert.equal(tree(c), ['a.txt']);
    const files = cacheFiles(c);
    assert.is(files.length, 1, 'one cache for the one plan');
    assert.is(statSync(files[0]!).mode & 0o777, 0o600);
    assert.is(statSync(join(c.state, '.plan-cache')).mode & 0o777, 0o700);
    // `runplan report` with no slug names the one slug there: the cache dir is not counted as one.
    const report = await runplan(['report', '--state-dir', c.state, '--json'], { env: c.env });
    assert.is(report.exitCode, 0, report.stderr);
    assert.is((JSON.parse(report.stdout) as { slug: string }).slug, 'cached');

    forge(c);
    const second = await run(c, ['--fresh']);
    assert.is(second.exitCode, 0, second.stderr);
    assert.equal(tree(c), ['forged.txt'], 'the (forged) cache was what ran');
  }),
);

test(
  'an edit of the plan file (a comment) is a miss: the plan as written runs, and an invalid edit is refused',
  withCachedPlan(async (c) => {
    assert.is((await run(c)).exitCode, 0);
    forge(c);
    appendFileSync(c.plan, '# a comment\n');
    const edited = await run(c, ['--fresh']);
    assert.is(edited.exitCode, 0, edited.stderr);
    assert.equal(tree(c), ['a.txt']);

    forge(c);
    writeFileSync(c.plan, PLAN.replace('base = "main"', 'base = "main"\njobs = 0'));
    const invalid = await run(c, ['--fresh']);
    assert.is(invalid.exitCode, 2, invalid.stderr);
    assert.match(invalid.stderr, /jobs/);
  }),
);

test(
  'an edit of a file the plan names (the prompt file) is a miss',
  withCachedPlan(async (c) => {
    assert.is((await run(c)).exitCode, 0);
    forge(c);
    writeFileSync(c.prompt, 'make a.txt, please\n');
    const r = await run(c, ['--fresh']);
    assert.is(r.exitCode, 0, r.stderr);
    assert.equal(tree(c), ['a.txt']);
  }),
);

test(
  'a cache another build made, or whose checksum fails, is not taken',
  withCachedPlan(async (c) => {
    assert.is((await run(c)).exitCode, 0);
    forge(c, { meta: (m) => (m.code = 'f'.repeat(64)) });
    const other = await run(c, ['--fresh']);
    assert.is(other.exitCode, 0, other.stderr);
    assert.equal(tree(c), ['a.txt'], 'another build');

    forge(c, { corrupt: true });
    const torn = await run(c, ['--fresh']);
    assert.is(torn.exitCode, 0, torn.stderr);
    assert.equal(tree(c), ['a.txt'], 'checksum');
  }),
);

test(
  'RUNPLAN_PLAN_CACHE=0: a cache there is not taken, and none is written',
  withCachedPlan(async (c) => {
    assert.is((await run(c)).exitCode, 0);
    forge(c);
    const off = await run(c, ['--fresh'], { RUNPLAN_PLAN_CACHE: '0' });
    assert.is(off.exitCode, 0, off.stderr);
    assert.equal(tree(c), ['a.txt']);
    const fresh = tempDir('runplan-state-off-');
    try {
      const r = await runplan(['run', c.plan, '--state-dir', fresh.path, '--fresh'], { env: { ...c.env, RUNPLAN_PLAN_CACHE: '0' } });
      assert.is(r.exitCode, 0, r.stderr);
      assert.not.ok(existsSync(join(fresh.path, '.plan-cache')), 'nothing written');
    } finally {
      fresh.cleanup();
    }
  }),
);

// The plan.json of each run of runplan/cached, by run id.
function planJsons(c: Cached): Map<string, string> {
  const slug = join(c.state, 'cached');
  const ids = (existsSync(slug) ? readdirSync(slug) : []).filter((n) => /^\d{8}T\d{6}Z-/.test(n));
  return new Map(ids.map((id) => [id, readFileSync(join(slug, id, 'plan.json'), 'utf8')]));
}

// `run` with `extra`, and the plan.json of the one run it made.
async function runForPlanJson(c: Cached, extra: string[], env: Record<string, string> = {}): Promise<string> {
  const before = planJsons(c);
  const r = await run(c, extra, env);
  assert.is(r.exitCode, 0, r.stderr);
  const made = [...planJsons(c)].filter(([id]) => !before.has(id));
  assert.is(made.length, 1, 'one new run');
  return made[0]![1];
}

test(
  "a hit writes the run's plan.json from the cache, the same bytes; a secret to mask then makes it anew, masked",
  withCachedPlan(
    async (c) => {
      const made = await runForPlanJson(c, []);
      const cached = await runForPlanJson(c, ['--fresh']);
      assert.is(cached, made, 'byte for byte');
      assert.match(made, /make a\.txt/);

      // TOKEN's value is text of the plan (the prompt): the plan still comes from the cache,
      // but its plan.json must be masked, not the cached unmasked text.
      const masked = await runForPlanJson(c, ['--fresh'], { TOKEN: 'make a.txt' });
      assert.not.match(masked, /make a\.txt/);
      assert.match(masked, /\*\*\*/);
    },
    PLAN.replace('base = "main"', 'base = "main"\nsecret_env = ["TOKEN"]'),
  ),
);

test(
  'the cache dir stays bounded: a write keeps the 32 most recently written caches and drops temp files over an hour old',
  withCachedPlan(async (c) => {
    const dir = join(c.state, '.plan-cache');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const hour = 3600;
    const now = Date.now() / 1000;
    // 40 caches of other plan files, written 1 to 40 hours ago; two temp files.
    const planted = Array.from({ length: 40 }, (_, i) => {
      const file = join(dir, `${i.toString(16).padStart(32, '0')}.json`);
      writeFileSync(file, '{}\n');
      utimesSync(file, now - (i + 1) * hour, now - (i + 1) * hour);
      return file;
    });
    const staleTemp = join(dir, 'x.json.4242.tmp');
    const freshTemp = join(dir, 'y.json.4243.tmp');
    writeFileSync(staleTemp, '');
    utimesSync(staleTemp, now - 2 * hour, now - 2 * hour);
    writeFileSync(freshTemp, '');

    const r = await run(c);
    assert.is(r.exitCode, 0, r.stderr);
    const left = new Set(readdirSync(dir).map((n) => join(dir, n)));
    assert.is([...left].filter((p) => p.endsWith('.json')).length, KEPT_PLAN_CACHES, 'the newest caches');
    assert.ok(
      planted.slice(0, KEPT_PLAN_CACHES - 1).every((p) => left.has(p)),
      'the 31 most recent planted ones stay',
    );
    assert.ok(
      planted.slice(KEPT_PLAN_CACHES - 1).every((p) => !left.has(p)),
      'the older ones are gone',
    );
    assert.not.ok(left.has(staleTemp), 'a temp file over an hour old is removed');
    assert.ok(left.has(freshTemp), 'a fresh one (a writer at work) is left');
    assert.is(cacheFiles(c).filter((p) => !planted.includes(p) && p.endsWith('.json')).length, 1, "this plan's own cache is there");
  }),
);

test(
  'a plan with a secret in it (an env_file) is never cached',
  withCachedPlan(
    async (c) => {
      writeFileSync(join(c.repo.path, 'secrets.env'), 'API_TOKEN=s3cr3t-value-1234\n');
      const r = await run(c);
      assert.is(r.exitCode, 0, r.stderr);
      assert.equal(cacheFiles(c), []);
    },
    PLAN.replace('format = "text"', 'format = "text"\nenv_file = "secrets.env"'),
  ),
);

test.run();
