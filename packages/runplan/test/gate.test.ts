// `runplan gate claude`: real Claude Code PreToolUse hook JSON on stdin of the real bin.
// Every deny path is made to fire, every allow case is shown to pass, and the exit code is
// only ever 0 or 2 (any other code would let the tool call through).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runBin, tempDir, withCleanup, withTimeout } from '@runplan/test-fixtures';
import { alive, endRunLeftovers, RUNPLAN, slugDir, waitForHolding, waitUntil, withPlan } from './support.js';

interface Call {
  tool?: string;
  command?: string;
  background?: boolean;
  cwd: string;
  toolInput?: Record<string, unknown>;
}

// The PreToolUse input Claude Code sends (common fields + tool_name, tool_input, tool_use_id).
function hookJson(c: Call): string {
  const toolInput = c.toolInput ?? { command: c.command, description: 'test', ...(c.background ? { run_in_background: true } : {}) };
  return JSON.stringify({
    session_id: 'd1b5c0de-0000-4000-8000-000000000000',
    transcript_path: '/tmp/transcript.jsonl',
    cwd: c.cwd,
    permission_mode: 'default',
    hook_event_name: 'PreToolUse',
    tool_name: c.tool ?? 'Bash',
    tool_input: toolInput,
    tool_use_id: 'toolu_01TEST',
  });
}

// The real bin as Claude Code runs it: the input on stdin, the answer in the exit code.
async function gate(input: string, failpoint?: string) {
  const env = { ...process.env };
  delete env.RUNPLAN_GATE_FAILPOINT;
  if (failpoint !== undefined) env.RUNPLAN_GATE_FAILPOINT = failpoint;
  const r = await runBin(RUNPLAN, ['gate', 'claude'], { input, env, timeoutMs: 30_000 });
  assert.ok(r.exitCode === 0 || r.exitCode === 2, `exit ${r.exitCode} (only 0 or 2 allowed): ${r.stderr}`);
  return r;
}

async function expectDeny(c: Call, reason: RegExp): Promise<string> {
  const r = await gate(hookJson(c));
  assert.is(r.exitCode, 2, `${c.command ?? JSON.stringify(c.toolInput)}: should be denied; stderr: ${r.stderr}`);
  assert.match(r.stderr, reason);
  return r.stderr;
}

async function expectAllow(c: Call): Promise<void> {
  const r = await gate(hookJson(c));
  assert.is(r.exitCode, 0, `${c.command ?? JSON.stringify(c.toolInput)}: should be allowed; stderr: ${r.stderr}`);
  assert.is(r.stderr, '');
}

const BACKGROUND: string[] = [
  'runplan run plan.toml &',
  'runplan run plan.toml & echo started',
  'cd /tmp && runplan run plan.toml &',
  'nohup runplan run plan.toml',
  'nohup runplan run plan.toml > run.log 2>&1 &',
  'setsid -f runplan run plan.toml',
  'runplan run plan.toml & disown',
  'screen -dmS plan runplan run plan.toml',
  "tmux new -d 'runplan run plan.toml'",
  'tmux new-session -d -s plan runplan demo',
  '( cd sub && runplan run plan.toml ) &',
  '{ runplan run plan.toml; } &',
  'systemd-run --user --scope runplan run plan.toml',
  'echo "runplan run plan.toml" | at now',
  'batch <<EOF\nrunplan run plan.toml\nEOF',
  'npx -y runplan run plan.toml &',
  'npx runplan demo &',
  'npm exec runplan -- run plan.toml &',
  'npm exec -- runplan run plan.toml &',
  'npm x -y runplan run plan.toml &',
  'pnpm exec runplan run plan.toml &',
  'pnpm dlx runplan run plan.toml &',
  'yarn dlx runplan run plan.toml &',
  'node /opt/runplan/packages/runplan/bin/runplan.js run plan.toml &',
  '/opt/runplan/bin/runplan run plan.toml &',
  "sh -c 'runplan run plan.toml &'",
  'bash -lc "nohup runplan run plan.toml"',
  'timeout 2h runplan run plan.toml &',
  'RUNPLAN_X=1 env FOO=bar runplan run plan.toml &',
  'x=$(runplan run plan.toml &)',
  'bash <<EOF\nrunplan run plan.toml &\nEOF',
  'if true; then runplan run plan.toml; fi &',
  'for i in 1; do runplan run plan.toml; done &',
  'while true; do if true; then runplan run plan.toml; fi; break; done &',
  'until false; do runplan demo; done > demo.log 2>&1 &',
  'coproc runplan run plan.toml',
  'coproc RP { runplan run plan.toml; }',
  'coproc { cd sub; runplan run plan.toml; }',
  'coproc (runplan run plan.toml)',
  'echo start; coproc timeout 2h runplan demo',
  "bash <<< 'runplan run plan.toml &'",
  'sh <<<"nohup runplan run plan.toml"',
  'sudo -b runplan run plan.toml',
  'sudo -E --background -u nobody runplan demo',
  'sudo -u nobody -b runplan run plan.toml',
  'echo "runplan run plan.toml &" | bash',
  "printf 'runplan run %s &\\n' plan.toml | sh",
  "echo 'nohup runplan run plan.toml' | bash -s",
  'cat <<EOF | bash\nrunplan run plan.toml &\nEOF',
  "echo -e 'runplan run plan.toml \\x26' | sh",
  "$'\\x72unplan' run plan.toml &",
  "$'run\\160lan' demo &",
  'RP=runplan; $RP run plan.toml &',
  'export RP=$(which runplan); nohup "$RP" run plan.toml',
  '$(which runplan) run plan.toml &',
  '`command -v runplan` run plan.toml &',
  'find . -name plan.toml -exec runplan run {} \\; &',
  'find . -name plan.toml -exec nohup runplan run {} +',
  "bash <(echo 'runplan run plan.toml &')",
  "printf -- 'runplan run plan.toml &' | bash",
  "echo 'runplan run plan.toml &' | sudo bash",
  "echo 'runplan run plan.toml &' | env FOO=1 bash -s",
  "sh < <(printf 'nohup runplan run %s\\n' plan.toml)",
];

test(
  'every background spelling of runplan run/demo is denied with the foreground instruction',
  withCleanup(
    120_000,
    () => tempDir('runplan-gate-'),
    async (dir) => {
      for (const command of BACKGROUND) {
        const stderr = await expectDeny({ command, cwd: dir.path }, /^runplan gate: background_launch: /);
        assert.match(stderr, /run `runplan run PLAN` in the foreground; it blocks until the run ends and its exit code is the answer/);
      }
    },
  ),
);

test(
  "the Bash tool's own run_in_background is denied for a launch, allowed for anything else",
  withCleanup(
    60_000,
    () => tempDir('runplan-gate-'),
    async (dir) => {
      const stderr = await expectDeny(
        { command: 'runplan run plan.toml', background: true, cwd: dir.path },
        /background_launch: run_in_background: true/,
      );
      assert.match(stderr, /hint: run `runplan run PLAN` in the foreground/);
      await expectAllow({ command: 'npm test', background: true, cwd: dir.path });
      await expectAllow({ command: 'runplan status', background: true, cwd: dir.path });
    },
  ),
);

const ALLOWED: string[] = [
  'runplan run plan.toml',
  'runplan run plan.toml && echo done',
  'true && runplan run plan.toml || echo failed $?',
  'echo "x & y" && runplan run plan.toml',
  'echo "runplan run plan.toml &"',
  "git commit -m 'do not run runplan run & in the background'",
  'runplan run plan.toml 2>&1 | tee run.log',
  'runplan run plan.toml &> run.log',
  'runplan run plan.toml >&2',
  'timeout 2h runplan run plan.toml',
  'settle --deadline 2h -- runplan run plan.toml',
  'npx -y runplan run plan.toml',
  'node packages/runplan/bin/runplan.js run plan.toml',
  'runplan run plan.toml --dry-run &',
  'sleep 1 & runplan run plan.toml',
  'cat <<EOF\nrunplan run plan.toml &\nEOF',
  'runplan status',
  'runplan stop thirteen',
  'ls -la && npm test &',
  'case x in a) echo a;; esac',
  'if true; then runplan run plan.toml; fi',
  'for i in 1 2; do echo $i; done & runplan run plan.toml',
  'while false; do sleep 1; done; runplan run plan.toml',
  'if true; then sleep 5 & fi; runplan run plan.toml',
  'echo "an open quote',
  'runplan run plan.toml && coproc sleep 1',
  'coproc sleep 1; runplan run plan.toml',
  "cat <<< 'runplan run plan.toml &'",
  'sudo -u builder runplan run plan.toml',
  'echo "runplan run plan.toml &" | cat',
  "echo 'runplan run plan.toml &' | bash -c 'wc -l'",
  "echo 'runplan run plan.toml' | bash",
  "echo 'runplan run plan.toml' | sudo bash",
  '$(which runplan) run plan.toml',
  'RP=runplan; $RP status &',
  "find . -name '*.toml' -exec cat {} \\; &",
  '$EDITOR notes.txt &',
  "printf '%s\\n' 'runplan run plan.toml &'",
  "bash <(echo 'runplan run plan.toml')",
  "diff <(echo 'runplan run plan.toml &') plan.toml",
];

test(
  'foreground launches, quoted ampersands, redirections and unrelated commands are allowed',
  withCleanup(
    120_000,
    () => tempDir('runplan-gate-'),
    async (dir) => {
      for (const command of ALLOWED) await expectAllow({ command, cwd: dir.path });
      await expectAllow({ tool: 'Read', toolInput: { file_path: join(dir.path, 'README.md') }, cwd: dir.path });
    },
  ),
);

test(
  'unparseable input and an internal error are denials (exit 2), never exit 1',
  withCleanup(
    60_000,
    () => tempDir('runplan-gate-'),
    async (dir) => {
      for (const input of ['', 'not json', '[]', '{"tool_input":{}}', '{"tool_name":"Bash","tool_input":{"command":7}}']) {
        const r = await gate(input);
        assert.is(r.exitCode, 2, `input ${JSON.stringify(input)}: ${r.stderr}`);
        assert.match(r.stderr, /^runplan gate: bad_input: .*the call is denied \(the gate fails closed\)/);
      }
      const thrown = await gate(hookJson({ command: 'ls', cwd: dir.path }), 'throw');
      assert.is(thrown.exitCode, 2);
      assert.match(thrown.stderr, /^runplan gate: gate_error: RUNPLAN_GATE_FAILPOINT=throw; the call is denied/);
      const unread = await gate(hookJson({ command: 'echo "open runplan run', cwd: dir.path }));
      assert.is(unread.exitCode, 2);
      assert.match(unread.stderr, /unreadable_command: cannot read the command \(unterminated " at offset 5\) and it names runplan/);
    },
  ),
);

test(
  'while a coordinator is live: status/log/report and reads of its state are denied; stop and a foreground run are not; after it dies they are allowed again',
  withPlan('single', { env: { MOCK_HOLD: 'only', MOCK_HOLD_SECONDS: '120' }, timeoutMs: 150_000 }, async (f) => {
    const cwd = f.repo.path;
    const state = join(cwd, '.git', 'runplan');
    const other = tempDir('runplan-gate-other-');
    let coordinator = 0;
    const run = runBin(RUNPLAN, ['run', f.plan], { env: f.env, cwd, timeoutMs: 140_000, onSpawn: (pid) => (coordinator = pid) });
    try {
      const journal = await waitForHolding(f.repo, 'single', 'only');
      const probes: Call[] = [
        { command: 'runplan status', cwd },
        { command: 'runplan status single --json', cwd },
        { command: 'npx runplan log single', cwd },
        { command: 'runplan report', cwd },
        { command: `runplan status --repo ${cwd}`, cwd: other.path },
        { command: `tail -f ${journal}`, cwd },
        { command: 'cat .git/runplan/single/*/journal.jsonl', cwd },
        { command: 'grep -r attempt-failed .git/runplan', cwd },
        { command: 'ls .git/runplan/', cwd },
        { command: `cd ${slugDir(f.repo, 'single')} && tail journal.jsonl`, cwd },
        { command: `wc -l < ${journal}`, cwd },
        { command: 'cat $(ls .git/runplan/single/*/journal.jsonl)', cwd },
        { command: 'ls .git/run*', cwd },
        { command: 'cd .git && ls runplan', cwd },
        { command: 'cat .git/*/single/*/journal.jsonl', cwd },
        { command: 'J=.git/runplan; tail $J/single/x', cwd },
        { command: 'cd .git; cd runplan; cat single/*/journal.jsonl', cwd },
        { command: 'D=.git; ls $D/runplan', cwd },
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, for bash
        { command: 'G=.git/; tail "${G}runplan/single/x"', cwd },
        { command: 'ls .git/**', cwd },
        { tool: 'Glob', toolInput: { pattern: 'runplan/**/journal.jsonl', path: join(cwd, '.git') }, cwd },
        { tool: 'Read', toolInput: { file_path: journal }, cwd },
        { tool: 'Grep', toolInput: { pattern: 'failed', path: state }, cwd },
        { tool: 'Glob', toolInput: { pattern: `${state}/**/evidence/*` }, cwd },
        // Walks of a tree started above the state root (a user trial found them let through).
        { command: 'grep -r attempt-failed .git', cwd },
        { command: 'grep -rl x', cwd: join(cwd, '.git') },
        { command: 'ls -R .git', cwd },
        { command: 'find . -name journal.jsonl', cwd },
        { command: 'du -sh .git/', cwd },
        { command: 'cp -r .git /tmp/copy', cwd },
        { command: 'tar czf /tmp/state.tgz .', cwd },
        { command: 'rg --hidden failed', cwd },
        { command: 'grep -rn -m 1 failed', cwd },
        { command: 'LC_ALL=C grep -r failed .', cwd },
        { command: 'timeout 5 find .', cwd },
        { tool: 'Grep', toolInput: { pattern: 'failed', path: join(cwd, '.git') }, cwd },
        { tool: 'Grep', toolInput: { pattern: 'failed' }, cwd: join(cwd, '.git') },
      ];
      for (const call of probes) {
        const stderr = await expectDeny(call, /^runplan gate: coordinator_live: .* while a coordinator is live: single \(pid \d+/);
        assert.match(stderr, /hint: wait for the blocking `runplan run` command's exit code/);
      }
      for (const call of [
        { command: 'runplan stop single', cwd },
        { command: `runplan run ${f.plan}`, cwd },
        { command: `runplan run ${f.plan} --dry-run`, cwd },
        { command: 'git log --oneline', cwd },
        { command: 'cat .git/HEAD', cwd },
        { command: 'ls .git/refs/* *.md', cwd },
        { command: 'cd .git && cat HEAD', cwd },
        // bash's `**` (globstar) does not descend into a hidden directory, as `*` does not match one.
        { command: 'grep -l TODO **/*.md', cwd },
        { command: 'shopt -s globstar; ls src/**/*.ts **/README.md', cwd },
        { command: 'D=.git; cat $D/HEAD', cwd },
        { command: 'runplan status', cwd: other.path },
        // Walks that never reach it: below it elsewhere, or skipping hidden directories (.git).
        { command: 'grep -rn TODO src', cwd },
        { command: "find src -name '*.ts'", cwd },
        { command: 'du -sh src', cwd },
        { command: 'rg TODO', cwd },
        { command: 'ls -R', cwd },
        { tool: 'Grep', toolInput: { pattern: 'TODO' }, cwd },
        { tool: 'Grep', toolInput: { pattern: 'TODO', path: join(cwd, 'src') }, cwd },
        // A walk of `.` after `cd src` walks src; a copy's destination is not walked.
        { command: "cd src && find . -name '*.ts'", cwd },
        { command: 'cp -r /tmp/template .', cwd },
        { command: 'tar xzf /tmp/a.tgz -C .', cwd },
        { command: 'constructor', cwd },
      ])
        await expectAllow(call);

      process.kill(coordinator, 'SIGKILL');
      await run.catch(() => undefined);
      await waitUntil('the coordinator is gone', () => !alive(coordinator));
      for (const call of probes) await expectAllow(call);
      await expectAllow({ command: 'runplan status', cwd });
    } finally {
      if (coordinator > 0 && alive(coordinator)) process.kill(coordinator, 'SIGKILL');
      await run.catch(() => undefined);
      other.cleanup();
    }
  }),
);

test(
  'a live coordinator under a --state-dir the command names is found',
  withPlan('single', { env: { MOCK_HOLD: 'only', MOCK_HOLD_SECONDS: '120' }, timeoutMs: 150_000 }, async (f) => {
    const scratch = tempDir('runplan-gate-state-');
    const stateDir = join(scratch.path, 'state');
    let coordinator = 0;
    const run = runBin(RUNPLAN, ['run', f.plan, '--state-dir', stateDir], {
      env: f.env,
      cwd: f.repo.path,
      timeoutMs: 140_000,
      onSpawn: (pid) => (coordinator = pid),
    });
    try {
      await waitUntil('the run holds its slug', () => existsSync(join(stateDir, 'single', 'coordinator.json')));
      await waitUntil(
        'the lock answers',
        async () => (await gate(hookJson({ command: `runplan status --state-dir ${stateDir}`, cwd: scratch.path }))).exitCode === 2,
      );
      await expectDeny({ command: `runplan status --state-dir=${stateDir}`, cwd: scratch.path }, /coordinator_live/);
      await expectAllow({ command: 'runplan status', cwd: scratch.path });
    } finally {
      if (coordinator > 0 && alive(coordinator)) process.kill(coordinator, 'SIGKILL');
      await run.catch(() => undefined);
      await endRunLeftovers(stateDir);
      scratch.cleanup();
    }
  }),
);

test(
  '--install merges the hook and the Bash timeouts, keeps other keys, is idempotent, and leaves an unreadable file untouched',
  withCleanup(
    60_000,
    () => tempDir('runplan-gate-install-'),
    async (dir) => {
      const file = join(dir.path, '.claude', 'settings.json');
      mkdirSync(join(dir.path, '.claude'));
      const before = {
        model: 'opus',
        env: { FOO: 'bar' },
        hooks: { PreToolUse: [{ matcher: 'Write', hooks: [{ type: 'command', command: 'lint' }] }] },
      };
      writeFileSync(file, JSON.stringify(before));
      const first = await runBin(RUNPLAN, ['gate', 'claude', '--install', '--project', dir.path, '--bash-timeout', '3h'], {
        timeoutMs: 30_000,
      });
      assert.is(first.exitCode, 0, first.stderr);
      assert.match(first.stderr, /runplan gate: installed: .*settings\.json/);
      const after = JSON.parse(readFileSync(file, 'utf8'));
      assert.is(after.model, 'opus');
      assert.equal(after.env, { FOO: 'bar', BASH_DEFAULT_TIMEOUT_MS: '10800000', BASH_MAX_TIMEOUT_MS: '10800000' });
      assert.is(after.hooks.PreToolUse.length, 2);
      assert.equal(after.hooks.PreToolUse[0], before.hooks.PreToolUse[0]);
      const entry = after.hooks.PreToolUse[1];
      assert.is(entry.matcher, 'Bash|Read|Grep|Glob');
      assert.is(entry.hooks[0].type, 'command');
      assert.is(entry.hooks[0].command, `${process.execPath} ${RUNPLAN} gate claude`);
      const text = readFileSync(file, 'utf8');
      const again = await runBin(RUNPLAN, ['gate', 'claude', '--install', '--project', dir.path, '--bash-timeout', '3h'], {
        timeoutMs: 30_000,
      });
      assert.is(again.exitCode, 0, again.stderr);
      assert.match(again.stderr, /already installed/);
      assert.is(readFileSync(file, 'utf8'), text, 'a second install changes nothing');

      // The installed command is a working hook.
      const hooked = await runBin('sh', ['-c', entry.hooks[0].command], {
        input: hookJson({ command: 'runplan run p.toml &', cwd: dir.path }),
        timeoutMs: 30_000,
      });
      assert.is(hooked.exitCode, 2, hooked.stderr);

      for (const bad of ['{"hooks": ', '[1]', '{"hooks": []}', '{"hooks": {"PreToolUse": {}}}', '{"env": "x"}']) {
        writeFileSync(file, bad);
        const r = await runBin(RUNPLAN, ['gate', 'claude', '--install', '--project', dir.path], { timeoutMs: 30_000 });
        assert.is(r.exitCode, 2, `${bad}: ${r.stderr}`);
        assert.match(r.stderr, /runplan gate: settings_unreadable: .*settings\.json: .*; left untouched/);
        assert.is(readFileSync(file, 'utf8'), bad, 'left untouched');
      }
    },
  ),
);

test(
  '--install never lowers a Bash timeout the user set larger: it keeps it and says so on stderr; a smaller one is raised',
  withCleanup(
    60_000,
    () => tempDir('runplan-gate-keep-'),
    async (dir) => {
      const file = join(dir.path, '.claude', 'settings.json');
      mkdirSync(join(dir.path, '.claude'));
      writeFileSync(file, JSON.stringify({ env: { BASH_DEFAULT_TIMEOUT_MS: '600000', BASH_MAX_TIMEOUT_MS: '172800000' } }));
      const r = await runBin(RUNPLAN, ['gate', 'claude', '--install', '--project', dir.path, '--bash-timeout', '1h'], {
        timeoutMs: 30_000,
      });
      assert.is(r.exitCode, 0, r.stderr);
      const after = JSON.parse(readFileSync(file, 'utf8'));
      assert.equal(after.env, { BASH_DEFAULT_TIMEOUT_MS: '3600000', BASH_MAX_TIMEOUT_MS: '172800000' });
      assert.match(
        r.stderr,
        /^runplan gate: kept: .*settings\.json: BASH_MAX_TIMEOUT_MS = 172800000 \(48h\), larger than --bash-timeout 1h; not lowered$/m,
      );
      assert.not.match(r.stderr, /kept: .*BASH_DEFAULT_TIMEOUT_MS/);
      assert.match(r.stderr, /runplan gate: installed: .*settings\.json/);
    },
  ),
);

test(
  '--install without --project/--user prints the entry (24h by default) and writes nothing; --user writes under HOME',
  withTimeout(60_000, async () => {
    const home = tempDir('runplan-gate-home-');
    try {
      const printed = await runBin(RUNPLAN, ['gate', 'claude', '--install'], {
        env: { ...process.env, HOME: home.path },
        timeoutMs: 30_000,
      });
      assert.is(printed.exitCode, 0, printed.stderr);
      const fragment = JSON.parse(printed.stdout);
      assert.is(fragment.env.BASH_DEFAULT_TIMEOUT_MS, String(24 * 3600_000));
      assert.is(fragment.hooks.PreToolUse[0].hooks[0].command, `${process.execPath} ${RUNPLAN} gate claude`);
      assert.not.ok(existsSync(join(home.path, '.claude')));
      const user = await runBin(RUNPLAN, ['gate', 'claude', '--install', '--user'], {
        env: { ...process.env, HOME: home.path },
        timeoutMs: 30_000,
      });
      assert.is(user.exitCode, 0, user.stderr);
      assert.ok(existsSync(join(home.path, '.claude', 'settings.json')));
      // A mistyped --project names no directory: refused, nothing created there.
      const typo = join(home.path, 'no-such-project');
      const missing = await runBin(RUNPLAN, ['gate', 'claude', '--install', '--project', typo], { timeoutMs: 30_000 });
      assert.is(missing.exitCode, 2, missing.stderr);
      assert.match(missing.stderr, /^runplan gate: usage: --project .*no-such-project: no such directory/);
      assert.not.ok(existsSync(typo), 'no project directory made up');
      const bad = await runBin(RUNPLAN, ['gate', 'claude', '--install', '--bash-timeout', 'soon'], { timeoutMs: 30_000 });
      assert.is(bad.exitCode, 2);
      assert.match(bad.stderr, /--bash-timeout soon: not a duration/);
      const codex = await runBin(RUNPLAN, ['gate', 'codex'], { input: '{}', timeoutMs: 30_000 });
      assert.is(codex.exitCode, 2);
      // Install options without --install: a usage error at once (valid hook input waiting on
      // stdin is not read), never taken for a hook call.
      for (const args of [['--project', home.path], ['--user'], ['--bash-timeout', '2h']]) {
        const stray = await runBin(RUNPLAN, ['gate', 'claude', ...args], {
          input: JSON.stringify({ tool_name: 'Bash', tool_input: { command: 'echo hi' }, cwd: home.path }),
          timeoutMs: 30_000,
        });
        assert.is(stray.exitCode, 2, args.join(' '));
        assert.match(stray.stderr, /^runplan gate: usage: --[a-z-]+ only go with --install\n {2}hint: runplan gate claude --install /);
      }
    } finally {
      home.cleanup();
    }
  }),
);

test(
  'a bin that cannot load its built CLI still denies as a hook (exit 2, never 1) and fails plainly otherwise',
  withCleanup(
    30_000,
    () => tempDir('runplan-gate-shim-'),
    async (dir) => {
      // The committed shim beside no dist/: what a broken install or an unbuilt checkout runs.
      mkdirSync(join(dir.path, 'bin'));
      writeFileSync(join(dir.path, 'bin', 'runplan.js'), readFileSync(RUNPLAN));
      const shim = join(dir.path, 'bin', 'runplan.js');
      const input = JSON.stringify({ tool_name: 'Bash', tool_input: { command: 'runplan run plan.toml &' }, cwd: dir.path });
      const gate = await runBin(shim, ['gate', 'claude'], { input, timeoutMs: 20_000 });
      assert.is(gate.exitCode, 2, gate.stderr);
      assert.match(gate.stderr, /^runplan: cannot load the built CLI/);
      const status = await runBin(shim, ['status'], { timeoutMs: 20_000 });
      assert.is(status.exitCode, 1, status.stderr);
    },
  ),
);

test.run();
