import writeFileAtomic from 'write-file-atomic';
import { basename, dirname, join } from 'node:path';
import type { RunView } from '../events/view.js';
import { listRunIds, RUN_ID_PATTERN, runPaths, slugPaths } from '../host/state.js';
import { readRun } from '../resume/inspect.js';
import { type FoldedRun, type PlanCopyFacts, reportData, type ReportData } from './report-data.js';
import { reportHtml } from './report-html.js';

// `runplan report`: one run's report, read-only from its journal (a crashed or degraded run too).

export type ReportFind =
  | { kind: 'found'; data: ReportData; html: () => string; defaultOut: string }
  | { kind: 'no_such_slug'; message: string }
  | { kind: 'no_such_run'; message: string };

// Quotes an argument for a command line people copy (only when it needs it).
function quoteArg(arg: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

// The runs the run in `runDir` continued, oldest first, each folded by the one RunView: each
// run-started's `continues` followed back to the first. A missing or unreadable run (or one
// named twice) ends the chain there; what was read is still shown.
export async function continuedRuns(runDir: string, view: RunView): Promise<FoldedRun[]> {
  const chain: FoldedRun[] = [];
  const seen = new Set([basename(runDir)]);
  let next = view.started?.continues ?? null;
  while (next !== null && RUN_ID_PATTERN.test(next) && !seen.has(next)) {
    seen.add(next);
    const read = await readRun(join(dirname(runDir), next, 'journal.jsonl'));
    if (read.scan === undefined) break;
    chain.unshift({ runId: next, view: read.view });
    next = read.view.started?.continues ?? null;
  }
  return chain;
}

// The report's data of the run whose journal this is (folded already, or read now), the
// runs it continued folded in. `planCopy`: its plan copy's facts, when the caller has them.
async function reportOf(journal: string, folded?: RunView, planCopy?: PlanCopyFacts): Promise<ReportData> {
  const read = folded === undefined ? await readRun(journal) : undefined;
  const view = folded ?? read!.view;
  const plan = typeof view.started?.planFile === 'string' ? view.started.planFile : '<plan>';
  const dir = dirname(journal);
  // A corrupt journal is shown as far as it is valid; `run` refuses it until --fresh abandons it.
  const corrupt = read?.status.kind === 'corrupt' ? read.status : undefined;
  return reportData(view, {
    journal,
    resumeCommand: `runplan run ${quoteArg(plan)}${corrupt !== undefined ? ' --fresh' : ''}`,
    ...(corrupt !== undefined
      ? {
          corrupt: `the journal is corrupt at offset ${corrupt.offset} (seq ${corrupt.seq ?? corrupt.expectedSeq}): ${corrupt.reason}${corrupt.detail ? `: ${corrupt.detail}` : ''}; what is shown is what comes before it`,
        }
      : {}),
    runId: basename(dir),
    continued: await continuedRuns(dir, view),
    planCopy,
  });
}

// The report of the slug's newest run (or of `runId`), and where it is written by default.
export async function findReport(stateRoot: string, slug: string, runId?: string): Promise<ReportFind> {
  const paths = slugPaths(stateRoot, slug);
  const runs = await listRunIds(paths);
  if (runs.length === 0) return { kind: 'no_such_slug', message: `${slug} has no runs under ${stateRoot}` };
  const id = runId ?? runs[runs.length - 1]!;
  if (!runs.includes(id)) return { kind: 'no_such_run', message: `${slug} has no run ${id} (runs: ${runs.join(', ')})` };
  const run = runPaths(paths, id);
  const data = await reportOf(run.journal);
  return { kind: 'found', data, html: () => reportHtml(data), defaultOut: join(run.dir, 'report.html') };
}

// Writes the report file atomically (it replaces only that run's report).
export async function writeReport(file: string, html: string): Promise<void> {
  await writeFileAtomic(file, html, { mode: 0o600 });
}

// The report written at a receipt, beside the run's journal: its path, or undefined when it
// could not be written (a report never changes the run's exit code or receipt). `view`: the
// journal already folded (RunEnd.view), so it is not read again; `planCopy` the plan copy's
// facts (RunEnd.planCopy), so the copy is not parsed again.
export async function writeRunReport(journal: string, view?: RunView, planCopy?: PlanCopyFacts): Promise<string | undefined> {
  try {
    const data = await reportOf(journal, view, planCopy);
    const file = join(dirname(journal), 'report.html');
    await writeReport(file, reportHtml(data));
    return file;
  } catch {
    return undefined;
  }
}
