import type { AttemptFailureData } from '../events/types.js';

/** The attempt a retry follows: its number and its failure (the one shape; its evidence tail is masked again here). */
export interface PreviousAttempt {
  attempt: number;
  failure: AttemptFailureData;
  /**
   * The previous attempt's worktree: it still exists (as evidence), so its paths in the
   * evidence are made relative to the new worktree — an agent must not edit the old one.
   */
  worktree?: string;
  /** The previous attempt's evidence dir in the state dir (its full output), named in the prompt. */
  evidenceDir?: string;
}

// Paths inside the previous attempt's worktree, relative (the retry runs in its own worktree).
function withoutWorktree(text: string, worktree: string | undefined): string {
  if (worktree === undefined || worktree === '') return text;
  return text.split(`${worktree}/`).join('').split(worktree).join('.');
}

export const EVIDENCE_LINES = 60;
export const EVIDENCE_BYTES = 8 * 1024;

/**
 * The retry's changed input: the task's prompt followed by a clearly delimited section with
 * the previous failure (class, reason, phase, evidence tail, secrets masked). Every
 * evidence line is indented behind `    | `, so nothing in it can pass for a line of the
 * prompt's own protocol (a `mock:` directive, a `RUNPLAN: BLOCKED` marker). Paths in the
 * previous attempt's worktree become relative; its evidence dir is named, never its worktree.
 */
export function retryPrompt(prompt: string | undefined, previous: PreviousAttempt, mask: (text: string) => string = (t) => t): string {
  const { failure } = previous;
  let tail = withoutWorktree(mask(failure.evidenceTail), previous.worktree)
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((l) => l.trimEnd());
  while (tail.length > 0 && tail[tail.length - 1] === '') tail.pop();
  tail = tail.slice(-EVIDENCE_LINES);
  let body = tail.map((l) => `    | ${l}`).join('\n');
  if (Buffer.byteLength(body) > EVIDENCE_BYTES)
    body = `    | …\n${Buffer.from(body)
      .subarray(-EVIDENCE_BYTES)
      .toString('utf8')
      .replace(/^[^\n]*\n/, '')}`;
  const section = [
    `----- runplan: attempt ${previous.attempt} of this task failed -----`,
    `class: ${failure.class}; reason: ${failure.reason}; phase: ${failure.phase}`,
    body === '' ? 'No output was captured.' : `Last lines of its output:\n${body}`,
    ...(previous.evidenceDir !== undefined
      ? [`Its full output is in ${previous.evidenceDir} (read only; work in your own directory).`]
      : []),
    'Fix the cause of this failure; do not repeat the same approach unchanged.',
    '----- end of runplan failure report -----',
  ].join('\n');
  const base = prompt ?? '';
  return base === '' ? `${section}\n` : `${base.replace(/\n*$/, '')}\n\n${section}\n`;
}
