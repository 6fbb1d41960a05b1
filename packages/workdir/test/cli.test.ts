import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { binPath, parseJsonLines, tempDir, withTimeout } from '@runplan/test-fixtures';
import { MARK_FILE, parseMark } from '../src/index.js';
import { at, plantMark, plantMix, stderrLines, workdir, workdirWithUmask } from './support.js';

const mode = (path: string) => statSync(path).mode & 0o777;

// One representative of every value class, with the tiers that allow it.
const samples: Array<[string, string, string[]]> = [
  ['run.id', 'r-1', ['workdir', 'pre_run', 'post_run']],
  ['run.attempt', '3', ['workdir', 'pre_run', 'post_run']],
  ['run.started_at', '20261129T075500Z', ['workdir', 'pre_run', 'post_run']],
  ['model', 'gpt-5.1', ['pre_run', 'post_run']],
  ['run.datadir', '/srv/w/.harness-run/r-1', ['pre_run', 'post_run']],
  ['event.file', '/tmp/e.json', ['pre_run', 'post_run']],
  ['run.outcome', 'failed', ['post_run']],
  ['run.exit_code', '7', ['post_run']],
];

test(
  'bin render: every variable class in every tier, allowed and refused with one line naming it',
  withTimeout(240_000, async () => {
    for (const tier of ['workdir', 'pre_run', 'post_run']) {
      // Everything the tier allows, in one template: one process per tier.
      const allowed = samples.filter(([, , tiers]) => tiers.includes(tier));
      const text = allowed.map(([name]) => `{{${name}}}`).join('|');
      const vars = allowed.flatMap(([name, value]) => ['--var', `${name}=${value}`]);
      const result = await workdir(['render', text, ...vars, '--tier', tier]);
      assert.is(result.exitCode, 0, `${tier}: ${result.stderr}`);
      assert.is(result.stdout, `${allowed.map(([, value]) => value).join('|')}\n`);
      // Everything it refuses, one at a time, each named.
      for (const [name, value] of samples.filter(([, , tiers]) => !tiers.includes(tier))) {
        const refusedText = `x/{{${name}}}`;
        const refused = await workdir(['render', refusedText, '--var', `${name}=${value}`, '--tier', tier]);
        assert.is(refused.exitCode, 2, `${name} in ${tier}: ${refused.stderr}`);
        assert.is(refused.stdout, '');
        const lines = stderrLines(refused);
        assert.is(lines.length, 1, refused.stderr);
        assert.match(lines[0]!, /^workdir: not_allowed_in_tier: /);
        assert.match(lines[0]!, `{{${name}}}`);
        assert.match(lines[0]!, JSON.stringify(refusedText));
      }
    }
  }),
);

test(
  'bin render: event.path and event.text are refused in every tier',
  withTimeout(180_000, async () => {
    for (const name of ['event.path', 'event.text']) {
      for (const tier of ['workdir', 'pre_run', 'post_run']) {
        const result = await workdir(['render', `{{${name}}}`, '--var', `${name}=x`, '--tier', tier]);
        assert.is(result.exitCode, 2);
        assert.match(result.stderr, new RegExp(`^workdir: untrusted_variable: .*\\{\\{${name.replace('.', '\\.')}\\}\\}`));
        assert.is(stderrLines(result).length, 1);
      }
    }
  }),
);

test(
  'bin render: .., /, empty and leading-dot identifiers are refused; values pass exactly as typed',
  withTimeout(180_000, async () => {
    for (const bad of ['..', '.', 'a/b', '', '.hidden']) {
      const result = await workdir(['render', '/srv/{{run.id}}', '--var', `run.id=${bad}`]);
      assert.is(result.exitCode, 2, JSON.stringify(bad));
      assert.is(result.stdout, '');
      assert.match(result.stderr, /^workdir: bad_identifier: in "\/srv\/\{\{run\.id\}\}": run\.id = /);
    }
    const exact = await workdir(['render', '{{run.id}}:{{run.attempt}}', '--var', 'run.id=0042', '--var=run.attempt=007']);
    assert.is(exact.stdout, '0042:007\n');
  }),
);

test(
  'bin render: dates default to now (UTC) unless given; syntax errors exit 2',
  withTimeout(180_000, async () => {
    const before = new Date().toISOString().slice(0, 10);
    const result = await workdir(['render', '{{run.date}} {{run.time}} {{run.started_at}}']);
    const after = new Date().toISOString().slice(0, 10);
    assert.is(result.exitCode, 0);
    const [date, time, stamp] = result.stdout.trim().split(' ');
    assert.ok(date === before || date === after, date);
    assert.match(time ?? '', /^[0-9]{6}$/);
    assert.is(stamp, `${date!.replaceAll('-', '')}T${time}Z`);
    const given = await workdir(['render', '{{run.date}}', '--var', 'run.date=2020-02-29']);
    assert.is(given.stdout, '2020-02-29\n');
    for (const [text, reason] of [
      ['/srv/{{run.id', 'unterminated'],
      ['/srv/{{}}', 'empty_reference'],
      ['/srv/{{run.idd}}', 'unknown_variable'],
      ['/srv/{{task.id}}', 'missing_value'],
    ]) {
      const bad = await workdir(['render', text!]);
      assert.is(bad.exitCode, 2, text);
      assert.match(bad.stderr, `workdir: ${reason}: `);
      assert.is(stderrLines(bad).length, 1);
    }
  }),
);

test(
  'bin create: 0700 under a permissive and a restrictive umask, marked, path on stdout',
  withTimeout(180_000, async () => {
    const tmp = tempDir();
    try {
      for (const mask of [0o000, 0o277]) {
        const template = `${tmp.path}/u${mask.toString(8)}/{{run.id}}.{{run.attempt}}`;
        const result = await workdirWithUmask(mask, ['create', template, '--var', 'run.id=r1', '--var', 'run.attempt=1']);
        assert.is(result.exitCode, 0, result.stderr);
        const leaf = join(tmp.path, `u${mask.toString(8)}`, 'r1.1');
        assert.is(result.stdout, `${leaf}\n`);
        assert.is(mode(leaf), 0o700, `leaf, umask ${mask.toString(8)}`);
        assert.is(mode(join(tmp.path, `u${mask.toString(8)}`)), 0o700, `parent, umask ${mask.toString(8)}`);
        const mark = parseMark(readFileSync(join(leaf, MARK_FILE), 'utf8'));
        assert.is(mark?.template, template);
        assert.is(mark?.runId, 'r1');
        assert.is(mark?.creator.pid, result.pid);
      }
    } finally {
      tmp.cleanup();
    }
  }),
);

test(
  'bin create: same run reuses, another run and an unmarked leaf are refused (exit 1)',
  withTimeout(180_000, async () => {
    const tmp = tempDir();
    try {
      const template = `${tmp.path}/runs/{{task.id}}`;
      const first = await workdir(['create', template, '--var', 'run.id=r1', '--var', 'task.id=api', '--json']);
      assert.is(first.exitCode, 0, first.stderr);
      assert.equal(JSON.parse(first.stdout), { path: join(tmp.path, 'runs', 'api'), reused: false, shared: false });
      const again = await workdir(['create', template, '--var', 'run.id=r1', '--var', 'task.id=api', '--json']);
      assert.equal(JSON.parse(again.stdout), { path: join(tmp.path, 'runs', 'api'), reused: true, shared: false });
      const other = await workdir(['create', template, '--var', 'run.id=r2', '--var', 'task.id=api']);
      assert.is(other.exitCode, 1);
      assert.is(other.stdout, '');
      assert.match(stderrLines(other)[0]!, `workdir: exists_other_run: ${join(tmp.path, 'runs', 'api')} belongs to run r1`);
      mkdirSync(join(tmp.path, 'runs', 'crashed'));
      const unmarked = await workdir(['create', template, '--var', 'run.id=r3', '--var', 'task.id=crashed']);
      assert.is(unmarked.exitCode, 1);
      const lines = stderrLines(unmarked);
      assert.is(lines.length, 2);
      assert.match(lines[0]!, /^workdir: exists_unmarked: /);
      assert.match(lines[1]!, `  hint: `);
      assert.match(lines[1]!, `rmdir ${join(tmp.path, 'runs', 'crashed')}`);
    } finally {
      tmp.cleanup();
    }
  }),
);

test(
  'bin create: a symlink, a file, a bad mark or another template at the path exit 1; a relative template exits 2',
  withTimeout(180_000, async () => {
    const tmp = tempDir();
    try {
      const runs = join(tmp.path, 'runs');
      plantMark(join(tmp.path, 'elsewhere'), { template: `${runs}/{{run.id}}`, runId: 'link', createdAt: at(0) });
      mkdirSync(runs);
      symlinkSync(join(tmp.path, 'elsewhere'), join(runs, 'link'));
      writeFileSync(join(runs, 'file'), '');
      mkdirSync(join(runs, 'garbled'));
      writeFileSync(join(runs, 'garbled', MARK_FILE), '{');
      plantMark(join(runs, 'foreign'), { template: `${runs}/{{task.id}}`, runId: 'foreign', createdAt: at(0) });
      for (const [id, reason] of [
        ['link', 'exists_not_directory'],
        ['file', 'exists_not_directory'],
        ['garbled', 'bad_mark'],
        ['foreign', 'exists_other_template'],
      ] as const) {
        const result = await workdir(['create', `${runs}/{{run.id}}`, '--var', `run.id=${id}`]);
        assert.is(result.exitCode, 1, `${id}: ${result.stderr}`);
        assert.match(stderrLines(result)[0]!, `workdir: ${reason}: ${join(runs, id)}`, result.stderr);
      }
      assert.ok(existsSync(join(tmp.path, 'elsewhere', MARK_FILE)));
      const relative = await workdir(['create', 'runs/{{run.id}}', '--var', 'run.id=r'], undefined, tmp.path);
      assert.is(relative.exitCode, 2);
      assert.match(relative.stderr, /^workdir: not_absolute: /);
      assert.not.ok(existsSync(join(tmp.path, 'runs', 'r')));
      mkdirSync(join(tmp.path, 'w'));
      symlinkSync(join(tmp.path, 'elsewhere'), join(tmp.path, 'w', '.harness-run'));
      const linked = await workdir(['datadir', join(tmp.path, 'w'), '--run-id', 'r']);
      assert.is(linked.exitCode, 1);
      assert.match(linked.stderr, /^workdir: exists_not_directory: .*\.harness-run exists and is a symlink/);
      const underFile = await workdir(['create', `${runs}/file/x/{{run.id}}`, '--var', 'run.id=r']);
      assert.is(underFile.exitCode, 1);
      assert.match(underFile.stderr, /^workdir: mkdir_failed: cannot create .*\/file\/x: .*\/file is not a directory \(ENOTDIR\)/);
      const fileWorkdir = await workdir(['datadir', join(runs, 'file'), '--run-id', 'r']);
      assert.is(fileWorkdir.exitCode, 1);
      assert.match(fileWorkdir.stderr, /^workdir: workdir_missing: .* is not a directory/);
    } finally {
      tmp.cleanup();
    }
  }),
);

test(
  'bin create: when the mark cannot be written the fresh leaf is removed again (exit 1), so no unmarked leaf blocks the run',
  withTimeout(180_000, async () => {
    const tmp = tempDir();
    try {
      // A parent so deep that the leaf fits under PATH_MAX but the mark's temp file inside it does not.
      let parent = tmp.path;
      while (parent.length + 201 < 4095 - 20) parent = join(parent, 'd'.repeat(200));
      parent = join(parent, 'e'.repeat(4095 - 20 - parent.length - 1));
      const id = 'r'.repeat(12);
      const result = await workdir(['create', `${parent}/{{run.id}}`, '--var', `run.id=${id}`]);
      assert.is(result.exitCode, 1, result.stderr);
      assert.is(result.stdout, '');
      assert.match(stderrLines(result)[0]!, /^workdir: mark_failed: cannot mark .*: ENAMETOOLONG$/);
      assert.equal(readdirSync(parent), [], 'the unmarked leaf was removed');
    } finally {
      tmp.cleanup();
    }
  }),
);

test(
  'bin create: template errors exit 2 naming element and variable, and create nothing',
  withTimeout(180_000, async () => {
    const tmp = tempDir();
    try {
      const cases: Array<[string[], string, string]> = [
        [
          ['create', `${tmp.path}/a/{{run.datadir}}`, '--var', 'run.id=r', '--var', 'run.datadir=/x'],
          'not_allowed_in_tier',
          '{{run.datadir}}',
        ],
        [['create', `${tmp.path}/a/{{harness.workdir}}`, '--var', 'run.id=r'], 'not_allowed_in_tier', '{{harness.workdir}}'],
        [['create', `${tmp.path}/a/{{run.id}}/tree`, '--var', 'run.id=r'], 'varying_not_last', '{{run.id}}'],
        [['create', `${tmp.path}/a/{{run.id}}`, '--var', 'run.id=..'], 'bad_identifier', 'run.id'],
        [['create', `${tmp.path}/a/{{task.id}}`, '--var', 'task.id=t'], 'missing_value', 'run.id'],
      ];
      for (const [args, reason, named] of cases) {
        const result = await workdir(args);
        assert.is(result.exitCode, 2, `${args.join(' ')}: ${result.stderr}`);
        const lines = stderrLines(result);
        assert.match(lines[0]!, `workdir: ${reason}: `);
        assert.match(lines[0]!, named);
      }
      const early = await workdir(['create', `${tmp.path}/a/{{run.id}}/tree`, '--var', 'run.id=r']);
      assert.match(stderrLines(early)[0]!, `element "{{run.id}}"`);
      assert.equal(readdirSync(tmp.path), []);
    } finally {
      tmp.cleanup();
    }
  }),
);

test(
  'bin create and holding: ~ is $HOME',
  withTimeout(180_000, async () => {
    const tmp = tempDir();
    try {
      const created = await workdir(['create', '~/runs/{{run.id}}', '--var', 'run.id=r1'], { HOME: tmp.path });
      assert.is(created.stdout, `${join(tmp.path, 'runs', 'r1')}\n`);
      const holding = await workdir(['holding', '~/runs/{{run.id}}'], { HOME: tmp.path });
      assert.is(holding.stdout, `${join(tmp.path, 'runs')}\n`);
    } finally {
      tmp.cleanup();
    }
  }),
);

test(
  'bin holding: with and without harness constants; refusals exit 2',
  withTimeout(180_000, async () => {
    const withConst = await workdir(['holding', '/srv/{{harness.name}}/runs/{{run.id}}', '--var', 'harness.name=nightly']);
    assert.is(withConst.stdout, '/srv/nightly/runs\n');
    const plain = await workdir(['holding', '/srv/runs/{{run.date}}.{{run.id}}']);
    assert.is(plain.stdout, '/srv/runs\n');
    const shared = await workdir(['holding', '/srv/{{plan.slug}}/work', '--var', 'plan.slug=p']);
    assert.is(shared.stdout, '/srv/p/work\n');
    const missing = await workdir(['holding', '/srv/{{harness.name}}/{{run.id}}']);
    assert.is(missing.exitCode, 2);
    assert.match(missing.stderr, /^workdir: missing_value: element "\{\{harness\.name\}\}" of .*\{\{harness\.name\}\} has no value/);
    const early = await workdir(['holding', '/srv/{{run.id}}/x']);
    assert.is(early.exitCode, 2);
    assert.match(early.stderr, /^workdir: varying_not_last: /);
  }),
);

test(
  'bin prune: removes only ours, oldest first; --json says what was kept and why; --dry-run removes nothing',
  withTimeout(180_000, async () => {
    const tmp = tempDir();
    try {
      const mix = plantMix(tmp.path);
      const common = [mix.template, '--retain', '2', '--var', 'plan.slug=p', '--in-flight', mix.inFlight[0]!];
      const before = readdirSync(mix.holding).sort();
      const dry = await workdir(['prune', ...common, '--dry-run', '--json']);
      assert.is(dry.exitCode, 0, dry.stderr);
      const dryLines = parseJsonLines(dry.stdout) as Array<Record<string, string>>;
      assert.equal(
        dryLines.filter((line) => line.action === 'would_remove').map((line) => line.path),
        mix.removed.map((name) => join(mix.holding, name)),
      );
      assert.equal(readdirSync(mix.holding).sort(), before);
      const real = await workdir(['prune', ...common, '--json']);
      assert.is(real.exitCode, 0, real.stderr);
      const lines = parseJsonLines(real.stdout) as Array<Record<string, string>>;
      assert.equal(
        lines.filter((line) => line.action === 'removed').map((line) => line.path),
        mix.removed.map((name) => join(mix.holding, name)),
      );
      const kept = Object.fromEntries(
        lines.filter((line) => line.action === 'kept').map((line) => [line.path!.slice(mix.holding.length + 1), line.reason]),
      );
      assert.equal(kept, mix.kept);
      for (const name of mix.removed) assert.not.ok(existsSync(join(mix.holding, name)));
      assert.ok(existsSync(join(mix.holding, 'r5.1')), 'the unmarked crash leaf survives');
      const plain = await workdir(['prune', mix.template, '--retain', '0', '--var', 'plan.slug=p']);
      // r8.1 is no longer named in flight, and it is the oldest.
      assert.is(plain.stdout, `${join(mix.holding, 'r8.1')}\n${join(mix.holding, 'r3.1')}\n${join(mix.holding, 'r4.1')}\n`);
    } finally {
      tmp.cleanup();
    }
  }),
);

test(
  'bin prune: a holding path that is a regular file is read_failed (exit 1), and the file is left as it was',
  withTimeout(60_000, async () => {
    const tmp = tempDir();
    try {
      const holding = join(tmp.path, 'holding');
      writeFileSync(holding, 'not a directory\n');
      const result = await workdir(['prune', `${holding}/{{run.id}}`, '--retain', '0']);
      assert.is(result.exitCode, 1, result.stderr);
      assert.match(result.stderr, `workdir: read_failed: holding directory ${holding} is not a directory`);
      assert.is(readFileSync(holding, 'utf8'), 'not a directory\n');
    } finally {
      tmp.cleanup();
    }
  }),
);

test(
  'bin prune: refused (exit 2, nothing removed) when the varying element is not last, shared, or --retain is bad',
  withTimeout(180_000, async () => {
    const tmp = tempDir();
    try {
      plantMark(join(tmp.path, 'r1', 'tree'), { template: `${tmp.path}/{{run.id}}/tree`, runId: 'r1', createdAt: at(0) });
      plantMark(join(tmp.path, 'shared', 'r1'), { template: `${tmp.path}/shared/{{run.id}}`, runId: 'r1', createdAt: at(0) });
      const cases: Array<[string[], RegExp]> = [
        [
          ['prune', `${tmp.path}/{{run.id}}/tree`, '--retain', '0'],
          /^workdir: varying_not_last: ".*": element "\{\{run\.id\}\}" names \{\{run\.id\}\}/,
        ],
        [['prune', `${tmp.path}/{{plan.slug}}`, '--retain', '0', '--var', 'plan.slug=shared'], /^workdir: shared_workdir: /],
        [['prune', `${tmp.path}/shared/{{run.id}}`], /^workdir: usage: prune needs --retain N/],
        [['prune', `${tmp.path}/shared/{{run.id}}`, '--retain', 'all'], /^workdir: bad_retain: /],
        [['prune', `${tmp.path}/shared/{{run.id}}`, '--retain', '-1'], /^workdir: bad_retain: --retain "-1" is not a non-negative integer/],
        [['prune', `${tmp.path}/shared/{{event.path}}`, '--retain', '0'], /^workdir: untrusted_variable: /],
      ];
      for (const [args, expected] of cases) {
        const result = await workdir(args);
        assert.is(result.exitCode, 2, `${args.join(' ')}: ${result.stderr}`);
        assert.match(result.stderr, expected, result.stderr);
        assert.is(result.stdout, '');
      }
      assert.ok(existsSync(join(tmp.path, 'r1', 'tree', MARK_FILE)));
      assert.ok(existsSync(join(tmp.path, 'shared', 'r1', MARK_FILE)));
    } finally {
      tmp.cleanup();
    }
  }),
);

test(
  'bin prune: a closed stdout does not change what was removed or the exit code',
  withTimeout(180_000, async () => {
    const tmp = tempDir();
    try {
      const template = `${tmp.path}/runs/{{run.id}}`;
      for (let i = 0; i < 50; i++) plantMark(join(tmp.path, 'runs', `r${i}`), { template, runId: `r${i}`, createdAt: at(i) });
      const child = spawn(process.execPath, [binPath('workdir'), 'prune', template, '--retain', '0', '--json'], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stdout.destroy();
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
      assert.is(code, 0, stderr);
      assert.equal(readdirSync(join(tmp.path, 'runs')), []);
    } finally {
      tmp.cleanup();
    }
  }),
);

test(
  'bin prune and datadir --keep-runs: a removal the file system refuses (an immutable file, as root) is remove_failed on stderr, exit 1; the other removals stand',
  withTimeout(60_000, async () => {
    const tmp = tempDir();
    const stuck: string[] = [];
    const lock = (file: string) => {
      writeFileSync(file, 'immutable\n');
      execFileSync('chattr', ['+i', file]);
      stuck.push(file);
    };
    try {
      const template = `${tmp.path}/runs/{{run.id}}`;
      for (const id of ['r1', 'r2', 'r3']) {
        const made = await workdir(['create', template, '--var', `run.id=${id}`]);
        assert.is(made.exitCode, 0, made.stderr);
      }
      lock(join(tmp.path, 'runs', 'r1', 'held.txt'));
      const pruned = await workdir(['prune', template, '--retain', '1', '--json']);
      assert.is(pruned.exitCode, 1, pruned.stderr);
      const r1 = join(tmp.path, 'runs', 'r1');
      assert.ok(
        pruned.stderr.split('\n').includes(`workdir: remove_failed: cannot remove ${r1}: ${join(r1, 'held.txt')}: EPERM`),
        pruned.stderr,
      );
      const lines = parseJsonLines(pruned.stdout) as Array<Record<string, string>>;
      assert.equal(
        lines.filter((l) => l.action === 'failed').map((l) => l.path),
        [join(tmp.path, 'runs', 'r1')],
      );
      assert.equal(
        lines.filter((l) => l.action === 'removed').map((l) => l.path),
        [join(tmp.path, 'runs', 'r2')],
        'the other removal stands',
      );
      assert.ok(existsSync(join(tmp.path, 'runs', 'r3')), 'the newest is kept');
      // The directory that would not go is still ours (its mark went last): once the file
      // system lets it go, the next prune removes it, never keeps it as someone else's (`unmarked`).
      const again = await workdir(['prune', template, '--retain', '1', '--json']);
      assert.is(again.exitCode, 1, again.stderr);
      assert.equal(
        (parseJsonLines(again.stdout) as Array<Record<string, string>>).filter((l) => l.action === 'failed').map((l) => l.path),
        [r1],
        'tried again, and said again',
      );
      execFileSync('chattr', ['-i', stuck.pop()!]);
      const freed = await workdir(['prune', template, '--retain', '1', '--json']);
      assert.is(freed.exitCode, 0, freed.stderr);
      assert.equal(
        (parseJsonLines(freed.stdout) as Array<Record<string, string>>).filter((l) => l.action === 'removed').map((l) => l.path),
        [r1],
      );

      const base = join(tmp.path, '.harness-run');
      for (const id of ['a', 'b']) assert.is((await workdir(['datadir', tmp.path, '--run-id', id])).exitCode, 0);
      lock(join(base, 'a', 'held.txt'));
      const bounded = await workdir(['datadir', tmp.path, '--run-id', 'c', '--keep-runs', '1', '--json']);
      assert.is(bounded.exitCode, 1, bounded.stderr);
      const a = join(base, 'a');
      assert.ok(
        bounded.stderr.split('\n').includes(`workdir: remove_failed: cannot remove ${a}: ${join(a, 'held.txt')}: EPERM`),
        bounded.stderr,
      );
      const report = JSON.parse(bounded.stdout) as { path: string; pruned: string[] };
      assert.is(report.path, join(base, 'c'), 'the new datadir is made all the same');
      assert.equal(report.pruned, [join(base, 'b')]);
    } finally {
      for (const file of stuck) execFileSync('chattr', ['-i', file]);
      tmp.cleanup();
    }
  }),
);

test(
  'bin datadir: creates, reuses, bounds by --keep-runs; refusals',
  withTimeout(180_000, async () => {
    const tmp = tempDir();
    try {
      const base = join(tmp.path, '.harness-run');
      for (const id of ['a', 'b', 'c']) {
        const made = await workdir(['datadir', tmp.path, '--run-id', id]);
        assert.is(made.exitCode, 0, made.stderr);
        assert.is(made.stdout, `${join(base, id)}\n`);
        assert.is(mode(join(base, id)), 0o700);
        assert.is(parseMark(readFileSync(join(base, id, MARK_FILE), 'utf8'))?.kind, 'datadir');
      }
      mkdirSync(join(base, 'unmarked'));
      const kept = await workdir(['datadir', tmp.path, '--run-id', 'd', '--keep-runs', '2', '--in-flight', join(base, 'a'), '--json']);
      assert.is(kept.exitCode, 0, kept.stderr);
      const report = JSON.parse(kept.stdout) as { path: string; pruned: string[] };
      assert.is(report.path, join(base, 'd'));
      assert.equal(report.pruned, [join(base, 'b')]);
      assert.equal(readdirSync(base).sort(), ['a', 'c', 'd', 'unmarked']);
      const numeric = await workdir(['datadir', tmp.path, '--run-id', '0042']);
      assert.is(numeric.stdout, `${join(base, '0042')}\n`);
      const missingId = await workdir(['datadir', tmp.path]);
      assert.is(missingId.exitCode, 2, missingId.stderr);
      assert.match(missingId.stderr, /^workdir: usage: datadir needs --run-id ID/);
      const badId = await workdir(['datadir', tmp.path, '--run-id', '..']);
      assert.is(badId.exitCode, 2, badId.stderr);
      assert.match(badId.stderr, /^workdir: bad_identifier: /);
      const zero = await workdir(['datadir', tmp.path, '--run-id', 'e', '--keep-runs', '0']);
      assert.is(zero.exitCode, 2, zero.stderr);
      assert.match(zero.stderr, /^workdir: bad_retain: /);
      const relative = await workdir(['datadir', 'rel', '--run-id', 'e'], undefined, tmp.path);
      assert.is(relative.exitCode, 2, relative.stderr);
      assert.match(relative.stderr, /^workdir: not_absolute: workdir "rel" is not an absolute path/);
      const missing = await workdir(['datadir', join(tmp.path, 'nope'), '--run-id', 'e']);
      assert.is(missing.exitCode, 1, missing.stderr);
      assert.match(missing.stderr, /^workdir: workdir_missing: /);
      assert.not.ok(existsSync(join(tmp.path, 'nope')));
      assert.not.ok(existsSync(join(base, 'e')));
      assert.not.ok(existsSync(join(tmp.path, 'rel')));
    } finally {
      tmp.cleanup();
    }
  }),
);

test(
  'bin usage errors exit 2 without a stack trace; --help lists the exit codes',
  withTimeout(180_000, async () => {
    const cases: string[][] = [
      [],
      ['bogus'],
      ['render'],
      ['render', 'x', '--bogus'],
      ['render', 'x', '--tier', 'hooks'],
      ['render', 'x', '--var', 'noequals'],
      ['render', 'x', '--var', 'run.idd=1'],
      ['render', 'x', '--var', 'run.id=a', '--var', 'run.id=b'],
      ['render', 'x', '--var'],
      ['render', 'x', '--tier', 'workdir', '--tier', 'post_run'],
      ['prune', '/tmp/never/{{run.id}}', '--retain', '20', '--retain=0'],
      ['datadir', '/tmp/never', '--run-id', 'a', '--run-id', 'b'],
      ['datadir', '/tmp/never', '--run-id', 'a', '--keep-runs', '2', '--keep-runs', '3'],
    ];
    for (const args of cases) {
      const result = await workdir(args);
      assert.is(result.exitCode, 2, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, /^workdir: [a-z_]+: /, result.stderr);
      assert.is(stderrLines(result).length, 1, result.stderr);
      assert.not.match(result.stderr, /\n\s+at /);
      if (args.filter((a) => /^--(tier|retain|run-id|keep-runs)\b/.test(a)).length > 1)
        assert.match(result.stderr, /^workdir: usage: --[a-z-]+ given 2 times; give it once$/m, result.stderr);
    }
    const help = await workdir(['--help']);
    assert.is(help.exitCode, 0);
    assert.match(help.stdout, 'Exit codes');
    assert.match(help.stdout, /2 +usage or invalid input/);
    const sub = await workdir(['prune', '--help']);
    assert.is(sub.exitCode, 0);
    assert.match(sub.stdout, '--retain');
    assert.match(sub.stdout, 'Exit codes');
  }),
);

test.run();
