import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseJsonLines, runBin, tempDir, withTimeout } from '@runplan/test-fixtures';
import { filesUnder, journalPath, ofType, records, RUNPLAN, runplan, setup, slugDir } from './support.js';

test(
  '--json writes every journal record as a JSON line on stdout',
  withTimeout(60_000, async () => {
    const f = setup('single');
    try {
      const r = await runplan(['run', f.plan, '--json'], f);
      assert.is(r.exitCode, 0, r.stderr);
      const lines = parseJsonLines(r.stdout) as Array<{ type: string; seq: number }>;
      const rs = await records(f.repo, 'single');
      assert.equal(
        lines.map((l) => l.seq),
        rs.filter((x) => x.type !== 'journal-header').map((x) => x.seq),
      );
      assert.is(lines.at(-1)!.type, 'run-complete');
    } finally {
      f.cleanup();
    }
  }),
);

test(
  '`runplan run --json | head -1`: the closed stdout changes nothing, the run still ends with its receipt',
  withTimeout(60_000, async () => {
    const f = setup('single');
    const scratch = tempDir('runplan-pipe-');
    try {
      const code = join(scratch.path, 'code');
      const script = `"$0" "$1" run "$2" --json 2>"$3.err"; echo $? >"$3"`;
      const r = await runBin('sh', ['-c', `{ ${script}; } | head -1`, process.execPath, RUNPLAN, f.plan, code], {
        env: f.env,
        timeoutMs: 55_000,
      });
      assert.is(r.exitCode, 0);
      assert.is(r.stdout.trim().split('\n').length, 1);
      assert.is((JSON.parse(r.stdout) as { type: string }).type, 'run-started');
      assert.is(readFileSync(code, 'utf8').trim(), '0', readFileSync(`${code}.err`, 'utf8'));
      const rs = await records(f.repo, 'single');
      assert.is(rs.at(-1)!.type, 'run-complete');
      assert.is(rs.filter((x) => x.terminal === true).length, 1);
    } finally {
      f.cleanup();
      scratch.cleanup();
    }
  }),
);

test(
  'on a terminal: a live table (task, state, attempt, elapsed) under a pseudo-terminal',
  withTimeout(90_000, async () => {
    const f = setup('parallel-rebase');
    try {
      const command = `'${process.execPath}' '${RUNPLAN}' run '${f.plan}'`;
      const r = await runBin('script', ['-qec', command, '/dev/null'], { env: { ...f.env, TERM: 'xterm' }, timeoutMs: 85_000 });
      assert.is(r.exitCode, 0, r.stdout);
      assert.match(r.stdout, /TASK\s+STATE\s+ATTEMPT\s+ELAPSED/);
      assert.match(r.stdout, /\x1b\[\d+A/, 'the table is redrawn in place');
      assert.match(r.stdout, /fast\s+done\s+1\s+\d+s/);
      assert.match(r.stdout, /slow\s+done\s+1\s+\d+s/);
      assert.match(r.stdout, /runplan: complete/);
      assert.not.match(r.stdout, /runplan: \d\d:\d\d:\d\d attempt-started/, 'no per-event lines on a terminal');
    } finally {
      f.cleanup();
    }
  }),
);

test(
  'secrets from env_file and secret_env are absent from every file under the state dir and from the output',
  withTimeout(60_000, async () => {
    const f = setup('env');
    try {
      const r = await runplan(['run', f.plan, '--json'], f);
      assert.is(r.exitCode, 0, r.stderr);
      const secrets = ['fixture-secret-token-4242', 'plan-secret-value-7731'];
      const files = filesUnder(slugDir(f.repo, 'env'));
      assert.ok(files.length > 5, 'the state dir holds the journal, plan copy and evidence');
      for (const file of files) {
        const text = readFileSync(file, 'utf8');
        for (const s of secrets) assert.not.ok(text.includes(s), `${s} found in ${file}`);
      }
      for (const s of secrets) {
        assert.not.ok(r.stdout.includes(s), `${s} on stdout`);
        assert.not.ok(r.stderr.includes(s), `${s} on stderr`);
      }
      // The agent did get them (it printed them; the transcript shows them masked).
      const rs = await records(f.repo, 'env');
      const transcript = readFileSync(ofType(rs, 'command-settled')[0]!.transcript, 'utf8');
      assert.match(transcript, /API_TOKEN=\*\*\*/);
      assert.match(transcript, /PLAN_SECRET=\*\*\*/);
      assert.match(f.repo.fileAt('runplan/env', 'out/env.txt') ?? '', /GREETING=hello-from-task-env/);
      assert.ok(existsSync(journalPath(f.repo, 'env')));
    } finally {
      f.cleanup();
    }
  }),
);

test(
  '`runplan demo` in a clean environment: the 13-task plan completes and says where the branch and journal are',
  withTimeout(180_000, async () => {
    const scratch = tempDir('runplan-demo-test-');
    try {
      const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: scratch.path, TMPDIR: scratch.path };
      const r = await runBin(RUNPLAN, ['demo'], { env, cwd: scratch.path, timeoutMs: 170_000 });
      assert.is(r.exitCode, 0, r.stderr);
      assert.match(r.stderr, /runplan: complete: 13 task\(s\)/);
      const repo = /scratch repository (\S+)/.exec(r.stderr)?.[1];
      if (repo === undefined) throw new Error(`no scratch repository named: ${r.stderr}`);
      assert.ok(repo.startsWith(scratch.path), r.stderr);
      assert.match(r.stderr, /result branch runplan\/thirteen/);
      assert.match(r.stderr, /journal: \S+journal\.jsonl/);
      rmSync(repo, { recursive: true, force: true });
    } finally {
      scratch.cleanup();
    }
  }),
);

test('`runplan demo --jobs abc`: exit 2 before any scratch repository is made', async () => {
  const scratch = tempDir('runplan-demo-usage-');
  try {
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: scratch.path, TMPDIR: scratch.path };
    for (const jobs of ['abc', '0']) {
      const r = await runBin(RUNPLAN, ['demo', '--jobs', jobs], { env, cwd: scratch.path });
      assert.is(r.exitCode, 2, r.stderr);
      assert.is(r.stderr, `runplan: usage: --jobs ${jobs}: not a positive integer\n  hint: runplan --help\n`);
    }
    assert.equal(readdirSync(scratch.path), []);
  } finally {
    scratch.cleanup();
  }
});

test.run();
