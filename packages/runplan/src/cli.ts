import { resolve } from 'node:path';
import { cac } from 'cac';
import { asTyped, prepareArgv, operandsAfterDashes, packageVersion, parseDuration, usageAsTyped } from '@runplan/common';
import { SafeOutput } from './observe/progress.js';
import { gateMain } from './gate/cli.js';
import {
  noRunsLine,
  printProblems,
  refuseEmptyPaths,
  refuseRepeated,
  runOptions,
  STRING_OPTIONS,
  stateRoot,
  UsageError,
} from './cli-support.js';
import { reportStop, stopExitCode } from './cli-stop.js';
import { statusCommand } from './cli-status.js';

export { stopExitCode } from './cli-stop.js';

// Each command's own modules load when it runs (`await import` in its action): `status`
// does not compile the coordinator, the report or the plan reader. The gate's stay static:
// a hook must deny, never fail to load halfway (bin/runplan.js).

const EXIT_CODES = `Exit codes:
  run, demo              0 complete; 1 failed (class on stderr); 2 usage or invalid plan;
                         3 refused to start; 4 slug locked by a live coordinator;
                         5 the journal itself failed (run left incomplete);
                         129/130/143 interrupted (SIGHUP: the terminal closed /
                         SIGINT / SIGTERM). Receipts are written for 0, 1, 129, 130,
                         143 only.
  run --dry-run          0 would dispatch or is up to date; 2 usage or invalid plan;
                         3 would refuse (reason and hint as run);
                         4 slug held by a live coordinator. Writes nothing.
  validate               0 valid; 2 invalid
  status                 0; 1 no such slug; 2 usage
  log                    0; 1 no such slug; 2 usage
  report                 0 written; 1 no such slug or run; 2 usage;
                         5 the file cannot be written
  stop                   0 stopped, or a crashed run's leftovers ended and the run closed;
                         1 nothing running and no incomplete run;
                         3 did not exit within --wait, or leftovers survived SIGKILL (pids named);
                         4 another stop holds the slug (or a holder on another host);
                         5 the crashed run's journal cannot be written
                         (its leftovers are ended all the same, pids printed)
  gate claude            0 allow; 2 deny (reason on stderr; any error is a denial)
  gate claude --install  0 merged or printed; 2 usage, or settings unreadable (untouched)`;

export async function main(argv: string[]): Promise<number> {
  const stderr = new SafeOutput(process.stderr);
  const stdout = new SafeOutput(process.stdout);
  const say = (line: string) => stderr.write(line + '\n');
  let code: number | undefined;
  const cli = cac('runplan');
  // The state root for status/log/report/stop, or undefined after saying why there is none (exit 2).
  const stateRootOrSay = async (o: Record<string, unknown>): Promise<string | undefined> => {
    const root = await stateRoot(o);
    if (root.ok) return root.value;
    say(`runplan: not_a_repository: ${root.message}`);
    code = 2;
    return undefined;
  };

  cli
    .command('run <plan>', 'Run a plan: the blocking coordinator (one foreground process)')
    .option('--fresh', 'Close incomplete runs of the slug as abandoned and start a new one (no continuation)')
    .option('--run <id>', 'Resume this incomplete run (when there are several)')
    .option('--retry <task>', "The cause of TASK's failures changed: its fingerprints and caps start over (repeatable)")
    .option('--jobs <n>', 'Tasks in flight at once (overrides the plan)')
    .option('--json', 'Print every journal record as a JSON line on stdout')
    .option('--repo <dir>', 'The git repository (default: the one containing the plan)')
    .option('--state-dir <dir>', 'State root (default: <git common dir>/runplan)')
    .option('--break-lock', 'Take over a slug lock whose holder is on another host')
    .option('--reset-budget', "Start the slug's spend over with this run (journaled); otherwise only raising [budget] lets more be spent")
    .option('--new-run', 'Start a new run even when the plan is up to date with its last complete run')
    .option('--keep-going', 'A task that stops for good stops only the tasks downstream of it (as make -k)')
    .option('--allow-background', 'Start even as a background job of an interactive shell (journaled)')
    .option(
      '--dry-run',
      'Say what the next run would do (skip, adopt, dispatch, refuse; budget, land pre-check); take no lock, write nothing',
    )
    .action(async (plan: string, o: Record<string, unknown>) => {
      const typed = asTyped(argv, o, STRING_OPTIONS);
      if (typed.dryRun === true) {
        const { dryRunCommand } = await import('./cli-dry-run.js');
        code = await dryRunCommand(resolve(plan), typed, stdout, stderr);
      } else {
        const { runCommand } = await import('./cli-run.js');
        code = await runCommand(resolve(plan), typed, stdout, stderr);
      }
    });

  cli.command('validate <plan>', 'Report every problem in a plan; run nothing').action(async (plan: string) => {
    const [{ loadPlan }, { missingExecutorTools }] = await Promise.all([import('./plan/load.js'), import('./executor/tools.js')]);
    const loaded = await loadPlan(resolve(plan));
    if (loaded.ok) {
      say(`runplan: valid: ${loaded.value.file}: ${loaded.value.tasks.length} task(s), slug ${loaded.value.slug}`);
      const missing = missingExecutorTools(loaded.value);
      if (missing.length > 0)
        say(
          `runplan: warning: executor_unavailable: ${loaded.value.file}: executor: ${missing.join(', ')} not on PATH (runplan run refuses until they are)`,
        );
      code = 0;
    } else {
      printProblems(resolve(plan), loaded.error, say);
      code = 2;
    }
  });

  cli
    .command('status [slug]', 'One row per slug: state, tasks, current task, disk; read-only')
    .option('--json', 'One JSON object per slug on stdout')
    .option('--repo <dir>', 'The git repository (default: the current directory)')
    .option('--state-dir <dir>', 'State root (default: <git common dir>/runplan)')
    .action(async (slug: string | undefined, typed: Record<string, unknown>) => {
      const o = asTyped(argv, typed, STRING_OPTIONS);
      const root = await stateRootOrSay(o);
      if (root === undefined) return;
      code = await statusCommand(root, slug, o, { say, print: (line) => stdout.write(line + '\n') });
    });

  cli
    .command('log [slug]', 'Every logical run of the slug (or of every slug): start, duration, outcome, tasks, attempts, cost, journal')
    .option('--json', 'One JSON object per run on stdout')
    .option('--repo <dir>', 'The git repository (default: the current directory)')
    .option('--state-dir <dir>', 'State root (default: <git common dir>/runplan)')
    .action(async (slug: string | undefined, typed: Record<string, unknown>) => {
      const o = asTyped(argv, typed, STRING_OPTIONS);
      const root = await stateRootOrSay(o);
      if (root === undefined) return;
      const { collectLog, logTable } = await import('./observe/log.js');
      const rows = await collectLog(root, slug);
      if (rows === undefined) {
        say(`runplan: no_such_slug: ${slug} has no runs under ${root}`);
        code = 1;
        return;
      }
      if (rows.length === 0) say(noRunsLine(root));
      if (o.json === true) for (const row of rows) stdout.write(JSON.stringify(row) + '\n');
      else if (rows.length > 0) for (const line of logTable(rows)) stdout.write(line + '\n');
      code = 0;
    });

  cli
    .command('report [slug]', "One run's report: a self-contained HTML file (or its data as JSON); read-only")
    .option('--run <id>', 'This run of the slug (default: the newest)')
    .option('--out <file>', 'Write the HTML here (- = stdout; default: <run dir>/report.html)')
    .option('--json', "Print the report's data as JSON on stdout instead")
    .option('--repo <dir>', 'The git repository (default: the current directory)')
    .option('--state-dir <dir>', 'State root (default: <git common dir>/runplan)')
    .action(async (slug: string | undefined, typed: Record<string, unknown>) => {
      const o = asTyped(argv, typed, STRING_OPTIONS);
      const root = await stateRootOrSay(o);
      if (root === undefined) return;
      const { reportCommand } = await import('./cli-report.js');
      code = await reportCommand(root, slug, o, { say, print: (text) => stdout.write(text) });
    });

  cli
    .command(
      'stop <slug>',
      'SIGTERM the live coordinator of a slug, wait, print its receipt; after a crash, end its leftovers and close the run',
    )
    .option('--wait <duration>', 'How long to wait for it to exit (default 60s)')
    .option('--grace <duration>', "After a crash: how long the run's leftover processes get after SIGTERM before SIGKILL (default 5s)")
    .option('--repo <dir>', 'The git repository (default: the current directory)')
    .option('--state-dir <dir>', 'State root (default: <git common dir>/runplan)')
    .action(async (slug: string, typed: Record<string, unknown>) => {
      const o = asTyped(argv, typed, STRING_OPTIONS);
      const waitMs = o.wait === undefined ? 60_000 : parseDuration(String(o.wait));
      if (waitMs === undefined) throw new UsageError(`--wait ${String(o.wait)}: not a duration (500ms, 30s, 10m, 2h)`);
      const graceMs = o.grace === undefined ? 5000 : parseDuration(String(o.grace));
      if (graceMs === undefined) throw new UsageError(`--grace ${String(o.grace)}: not a duration (500ms, 30s, 10m, 2h)`);
      const root = await stateRootOrSay(o);
      if (root === undefined) return;
      const { stopSlug } = await import('./observe/stop.js');
      const end = await stopSlug(root, slug, waitMs, { graceMs });
      reportStop(end, stdout, say);
      code = stopExitCode(end);
    });

  cli
    .command('demo', 'Run the bundled 13-task example plan with mock agents in a scratch repo')
    .option('--jobs <n>', 'Tasks in flight at once (the plan says 3)')
    .option('--json', 'Print every journal record as a JSON line on stdout')
    .action(async (typed: Record<string, unknown>) => {
      const o = asTyped(argv, typed, STRING_OPTIONS);
      runOptions({ jobs: o.jobs }); // a usage error before the scratch repository is made
      // Loaded only here: the demo pulls in execa (~100 modules) that `run` does not need.
      const { prepareDemo } = await import('./demo.js');
      const demo = await prepareDemo();
      if (!demo.ok) {
        say(`runplan: ${demo.error.reason}: ${demo.error.message}`);
        code = 3;
        return;
      }
      say(`runplan: demo: scratch repository ${demo.value.repo}`);
      process.env.PATH = demo.value.path;
      const { runCommand } = await import('./cli-run.js');
      code = await runCommand(demo.value.planFile, { jobs: o.jobs, json: o.json }, stdout, stderr);
      say(`runplan: demo: result branch runplan/thirteen in ${demo.value.repo}`);
      say(`  hint: git -C ${demo.value.repo} log --oneline runplan/thirteen; runplan status --repo ${demo.value.repo}`);
    });

  cli
    .command('gate <agent>', 'Claude Code PreToolUse hook: deny background launches and state polling while a run is live')
    .option('--install', 'Merge the hook and the Bash timeouts into .claude/settings.json (print them without --project/--user)')
    .option('--project <dir>', 'With --install: DIR/.claude/settings.json')
    .option('--user', 'With --install: ~/.claude/settings.json')
    .option('--bash-timeout <duration>', "With --install: the Bash tool's default and maximum timeout (default 24h)")
    .action(async (agent: string, typed: Record<string, unknown>) => {
      const o = asTyped(argv, typed, STRING_OPTIONS);
      code = await gateMain(agent, o, { stdin: process.stdin, say, print: (l) => stdout.write(l + '\n'), bin: process.argv[1] ?? '' });
    });

  cli.option('--version', 'Print the version');
  cli.help((sections) => {
    sections.push({ body: EXIT_CODES });
  });

  try {
    prepareArgv(cli, argv);
    const parsed = cli.parse(['node', 'runplan', ...argv], { run: false });
    if (parsed.options.help === true || parsed.options.h === true) return 0;
    // `--version` anywhere among runplan's own arguments (never after `--`), as settle reads it; `--help` outranks it.
    if (parsed.options.version) {
      stdout.write(`runplan ${packageVersion(import.meta.url)}\n`);
      return 0;
    }
    if (cli.matchedCommand === undefined) {
      say(
        `runplan: usage: ${argv.length === 0 ? 'a command is required' : `unknown command "${argv[0]}"`} (run, validate, status, log, report, stop, demo, gate)\n  hint: runplan --help`,
      );
      return 2;
    }
    refuseRepeated([...cli.globalCommand.options, ...cli.matchedCommand.options], argv);
    refuseEmptyPaths(argv);
    operandsAfterDashes(cli);
    await cli.runMatchedCommand();
  } catch (e) {
    if (e instanceof Error && (e.name === 'CACError' || e instanceof UsageError)) {
      say(`runplan: usage: ${usageAsTyped(e.message, argv)}\n  hint: runplan --help`);
      return 2;
    }
    say(`runplan: internal_error: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
  return code ?? 2;
}
