// skills/runplan/SKILL.md: every runplan command it shows runs against the demo plan (the
// 13-task fixture in a scratch repo, mock agents on PATH, as `runplan demo` sets it up), with
// the placeholders PLAN, TASK and SLUG substituted, and exits as the skill's table says.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { fixture, runBin, withCleanup } from '@runplan/test-fixtures';
import { prepareDemo } from '../src/demo.js';
import { RUNPLAN } from './support.js';

const SKILL = fixture('../skills/runplan/SKILL.md');

// The commands the skill shows: each line of its sh blocks, and each inline `runplan …`.
function shownCommands(text: string): string[] {
  const commands: string[] = [];
  for (const block of text.matchAll(/```sh\n([\s\S]*?)```/g))
    commands.push(...block[1]!.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('#')));
  for (const span of text.matchAll(/`(runplan [^`]+)`/g)) commands.push(span[1]!);
  return [...new Set(commands.map((c) => c.trim()))];
}

/** What each shown command exits with after the plan ran to completion once (the table's codes). */
const EXPECTED: Record<string, number> = {
  'runplan validate PLAN': 0,
  'runplan run PLAN': 0,
  'runplan run PLAN --retry TASK': 0,
  'runplan run PLAN --keep-going': 0,
  'runplan run PLAN --dry-run': 0,
  'runplan status': 0,
  'runplan stop SLUG': 1,
  'runplan gate claude --install --project .': 0,
};

test('the front matter names the skill and says when to use it', () => {
  const front = /^---\nname: (.+)\ndescription: (.+)\n---\n/.exec(readFileSync(SKILL, 'utf8'));
  assert.ok(front, 'front matter with name and description');
  assert.is(front![1], 'runplan');
  assert.ok(front![2]!.length > 40);
});

test(
  'every command the skill shows runs against the demo plan and exits as documented',
  withCleanup(
    170_000,
    () => {
      const bin = mkdtempSync(join(tmpdir(), 'runplan-skill-bin-'));
      symlinkSync(RUNPLAN, join(bin, 'runplan'));
      const dirs = [bin];
      return {
        bin,
        dirs,
        cleanup: () => {
          for (const d of dirs) rmSync(d, { recursive: true, force: true });
        },
      };
    },
    async (f) => {
      const demo = await prepareDemo();
      if (!demo.ok) throw new Error(demo.error.message);
      f.dirs.push(demo.value.dir);
      {
        const text = readFileSync(SKILL, 'utf8');
        const commands = shownCommands(text);
        assert.equal([...commands].sort(), Object.keys(EXPECTED).sort(), 'the test knows every command the skill shows');
        const env = { ...process.env, PATH: [f.bin, demo.value.path].join(delimiter), RUNPLAN_GATE_FAILPOINT: '' };
        const order = [
          'runplan validate PLAN',
          'runplan run PLAN',
          'runplan run PLAN --retry TASK',
          'runplan run PLAN --keep-going',
          'runplan status',
          'runplan stop SLUG',
          'runplan gate claude --install --project .',
        ];
        for (const shown of order) {
          const line = shown
            .replace(/\bPLAN\b/g, demo.value.planFile)
            .replace(/\bTASK\b/g, 't07')
            .replace(/\bSLUG\b/g, 'thirteen');
          const r = await runBin('sh', ['-c', line], { cwd: demo.value.repo, env, timeoutMs: 150_000 });
          assert.is(r.exitCode, EXPECTED[shown], `${shown} → ${line}: exit ${r.exitCode}\n${r.stderr}`);
        }

        // The example plan in the skill is a valid plan.
        const toml = /```toml\n([\s\S]*?)```/.exec(text)![1]!;
        mkdirSync(join(demo.value.repo, 'prompts'), { recursive: true });
        writeFileSync(join(demo.value.repo, 'prompts', 'api.md'), 'Add the API.\n');
        writeFileSync(join(demo.value.repo, 'example.toml'), toml);
        const valid = await runBin(RUNPLAN, ['validate', join(demo.value.repo, 'example.toml')], {
          cwd: demo.value.repo,
          env,
          timeoutMs: 30_000,
        });
        assert.is(valid.exitCode, 0, valid.stderr);
      }
    },
  ),
);

test.run();
