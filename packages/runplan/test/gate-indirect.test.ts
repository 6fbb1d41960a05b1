// `runplan gate claude` on launches and reads spelled indirectly: a script sourced from a
// process substitution, a pipe through pass-through stages into a shell, a shell function the
// command defines, a variable that splits into words, and brace expansion. Real hook JSON on
// stdin of the real bin; the answer is the exit code (0 allow, 2 deny).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runBin, tempDir, withCleanup } from '@runplan/test-fixtures';
import { alive, RUNPLAN, waitForHolding, waitUntil, withPlan } from './support.js';

// The PreToolUse input Claude Code sends for a Bash call.
function hookJson(command: string, cwd: string): string {
  return JSON.stringify({
    session_id: 'd1b5c0de-0000-4000-8000-000000000000',
    transcript_path: '/tmp/transcript.jsonl',
    cwd,
    permission_mode: 'default',
    hook_event_name: 'PreToolUse',
    tool_name: 'Bash',
    tool_input: { command, description: 'test' },
    tool_use_id: 'toolu_01TEST',
  });
}

async function gate(command: string, cwd: string) {
  const env = { ...process.env };
  delete env.RUNPLAN_GATE_FAILPOINT;
  const r = await runBin(RUNPLAN, ['gate', 'claude'], { input: hookJson(command, cwd), env, timeoutMs: 30_000 });
  assert.ok(r.exitCode === 0 || r.exitCode === 2, `exit ${r.exitCode} (only 0 or 2 allowed): ${r.stderr}`);
  return r;
}

async function expectDeny(command: string, cwd: string, reason: RegExp): Promise<void> {
  const r = await gate(command, cwd);
  assert.is(r.exitCode, 2, `${command}: should be denied; stderr: ${r.stderr}`);
  assert.match(r.stderr, reason);
}

async function expectAllow(command: string, cwd: string): Promise<void> {
  const r = await gate(command, cwd);
  assert.is(r.exitCode, 0, `${command}: should be allowed; stderr: ${r.stderr}`);
  assert.is(r.stderr, '');
}

const BACKGROUND: string[] = [
  // The current shell runs what `source` / `.` reads from a process substitution.
  "source <(echo 'runplan run plan.toml &')",
  ". <(printf 'runplan run %s &\\n' plan.toml)",
  "source <(echo 'runplan run plan.toml') &",
  // Stages that pass their input through unchanged, between the script and the shell.
  "echo 'runplan run plan.toml &' | cat | bash",
  "printf 'runplan run %s &\\n' plan.toml | tee log.txt | sh",
  "echo 'runplan run plan.toml &' | cat - | bash",
  "echo 'nohup runplan run plan.toml' | tee -a log.txt | cat | bash -s",
  // A shell function the command defines runs its body where it is called.
  'f() { runplan run plan.toml; }; f &',
  'function f { runplan run plan.toml; }; f &',
  'function f() { runplan run plan.toml; }\nf &',
  'f() { runplan run plan.toml & }; f',
  'f() (runplan demo); nohup true; f & wait',
  'g() { runplan run "$1"; }; f() { g plan.toml; }; { f; } &',
  // An unquoted variable splits into words: the first is the program.
  'RP="runplan run"; $RP plan.toml &',
  'export RP="nohup runplan"; $RP run plan.toml',
  // Brace expansion makes the words (an empty one is dropped).
  'nohup {runplan,} run plan.toml',
];

const ALLOWED: string[] = [
  "source <(echo 'runplan run plan.toml')",
  ". <(echo 'runplan status &')",
  'source ./env.sh &',
  "echo 'runplan run plan.toml' | cat | bash",
  "echo 'runplan run plan.toml &' | cat",
  "echo 'runplan run plan.toml &' | tee log.txt",
  // A stage that changes its input is not looked through: what reaches the shell stays unknown.
  "echo 'runplan run plan.toml &' | grep x | bash",
  "echo 'runplan run plan.toml &' | cat -n | bash",
  "echo 'runplan run plan.toml &' | cat other.sh | bash",
  'f() { runplan run plan.toml; }; f',
  'f() { runplan status; }; f &',
  'function f { runplan run plan.toml; }; g &',
  'f() { f; }; f',
  'RP="runplan run"; $RP plan.toml',
  'RP="runplan status"; $RP &',
  'X="a b"; echo $X &',
  'arr=(); runplan run plan.toml',
  "echo '{runplan,} run plan.toml &'",
];

test(
  'indirect background launches are denied; their foreground and shell-less forms are allowed',
  withCleanup(
    120_000,
    () => tempDir('runplan-gate-'),
    async (dir) => {
      for (const command of BACKGROUND) await expectDeny(command, dir.path, /^runplan gate: background_launch: /);
      for (const command of ALLOWED) await expectAllow(command, dir.path);
    },
  ),
);

test(
  'while a coordinator is live, a read of its state through brace expansion is denied; quoted braces are not expanded',
  withPlan('single', { env: { MOCK_HOLD: 'only', MOCK_HOLD_SECONDS: '120' }, timeoutMs: 150_000 }, async (f) => {
    const cwd = f.repo.path;
    let coordinator = 0;
    const run = runBin(RUNPLAN, ['run', f.plan], { env: f.env, cwd, timeoutMs: 140_000, onSpawn: (pid) => (coordinator = pid) });
    try {
      await waitForHolding(f.repo, 'single', 'only');
      const reads = [
        'ls .git/{runplan,refs}',
        'cat .git/runplan/{a,b}/journal.jsonl',
        'tail .git/run{plan,x}/single/x',
        'ls .git/{HEAD,{refs,runplan}}',
        'ls .git/runpla{m..o}',
        'wc -l < .git/{runplan,x}/single/x',
        "ls .git/{'runplan',refs}",
      ];
      for (const command of reads)
        await expectDeny(command, cwd, /^runplan gate: coordinator_live: reading .* while a coordinator is live: single \(pid \d+/);
      for (const command of [
        "ls '.git/{runplan,refs}'",
        'ls ".git/{runplan,refs}"',
        'ls .git/\\{runplan,refs\\}',
        'ls .git/{runplan}',
        'ls .git/{HEAD,refs}',
        'ls .git/runpla{a..c}',
      ])
        await expectAllow(command, cwd);
      process.kill(coordinator, 'SIGKILL');
      await run.catch(() => undefined);
      await waitUntil('the coordinator is gone', () => !alive(coordinator));
      for (const command of reads) await expectAllow(command, cwd);
    } finally {
      if (coordinator > 0 && alive(coordinator)) process.kill(coordinator, 'SIGKILL');
      await run.catch(() => undefined);
    }
  }),
);

test.run();
