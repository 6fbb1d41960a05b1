// `runplan gate claude` on launches and reads spelled indirectly: a script sourced from a
// process substitution, a pipe through pass-through stages into a shell, a shell function the
// command defines, a variable that splits into words, and brace expansion. Real hook JSON on
// stdin of the real bin; the answer is the exit code (0 allow, 2 deny).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runBin, tempDir, withCleanup } from '@runplan/test-fixtures';
import { RUNPLAN } from './support.js';

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

test.run();
