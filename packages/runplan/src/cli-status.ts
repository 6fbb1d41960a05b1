import { resolve } from 'node:path';
import { collectStatus } from './observe/status.js';
import { statusTable } from './observe/status-table.js';
import { clockTime } from './cli-stop.js';
import { noRunsLine } from './cli-support.js';

// `runplan status [SLUG] [--json]` at the terminal: the table (or a JSON object per slug) on
// stdout, then what each row asks of a person (a degraded run to resume, leftovers or queued
// jobs to stop) on stderr; no runs at all is one line on stderr. Exit 0, or 1 for no such slug.
export async function statusCommand(
  root: string,
  slug: string | undefined,
  o: Record<string, unknown>,
  io: { say: (line: string) => void; print: (line: string) => void },
): Promise<number> {
  const { say, print } = io;
  const flags = [
    ...(typeof o.stateDir === 'string' ? ['--state-dir', resolve(o.stateDir)] : []),
    ...(typeof o.repo === 'string' ? ['--repo', resolve(o.repo)] : []),
  ];
  const rows = await collectStatus(root, slug, { resumeFlags: flags });
  if (rows === undefined) {
    say(`runplan: no_such_slug: ${slug} has no runs under ${root}`);
    return 1;
  }
  if (rows.length === 0) say(noRunsLine(root));
  if (o.json === true) for (const row of rows) print(JSON.stringify(row));
  else if (rows.length > 0) for (const line of statusTable(rows)) print(line);
  const stopCommand = (slug: string) => ['runplan', 'stop', slug, ...flags].join(' ');
  for (const row of rows) {
    const seen = row.lastSeen !== null ? `; last seen ${clockTime(row.lastSeen)}` : '';
    if (row.state === 'degraded')
      say(`runplan: degraded: ${row.slug} run ${row.runId} is incomplete and its coordinator is gone${seen}\n  hint: ${row.resumeCommand}`);
    if (row.state === 'stopping')
      say(
        `runplan: stopping: ${row.slug} run ${row.runId}: runplan stop (pid ${row.coordinator?.pid ?? '?'}) is ending what its crashed coordinator left running${seen}`,
      );
    if (row.state === 'corrupt') say(`runplan: corrupt: ${row.journal}: ${row.corruption}`);
    if (row.jobs !== undefined && row.jobs.length > 0) {
      say(`runplan: jobs: ${row.slug} run ${row.runId}: ${row.jobs.length} Slurm job(s) of it still queued: ${row.jobs.join(' ')}`);
      if (row.state !== 'stopping' && row.leftovers.length === 0) say(`  hint: ${stopCommand(row.slug)}   (cancels them)`);
    }
    if (row.leftovers.length > 0) {
      say(
        `runplan: leftovers: ${row.slug} run ${row.runId}: ${row.leftovers.length} process(es) its crashed coordinator left running are still alive: ${row.leftovers.join(' ')}`,
      );
      if (row.state !== 'stopping')
        say(`  hint: ${stopCommand(row.slug)}   (ends them${row.state === 'degraded' ? ' and closes the run' : ''})`);
    }
  }
  return 0;
}
