import type { FailureClass } from '../events/types.js';

/** What a retry's prompt says about the attempt before it. */
export interface PreviousFailure {
  class: FailureClass;
  reason: string;
  phase: string;
  attempt: number;
  /** Gate output tail / stderr tail; masked here again with `secrets`. */
  evidence: string;
}

export const EVIDENCE_LINES = 60;
export const EVIDENCE_BYTES = 8 * 1024;

/**
 * The retry's changed input: the task's prompt followed by a clearly delimited section with
 * the previous failure (class, reason, phase, evidence tail, secrets masked). Every
 * evidence line is indented behind `    | `, so nothing in it can pass for a line of the
 * prompt's own protocol (a `mock:` directive, a `RUNPLAN: BLOCKED` marker).
 */
export function retryPrompt(prompt: string | undefined, previous: PreviousFailure, mask: (text: string) => string = (t) => t): string {
  let tail = mask(previous.evidence)
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
    `class: ${previous.class}; reason: ${previous.reason}; phase: ${previous.phase}`,
    body === '' ? 'No output was captured.' : `Last lines of its output:\n${body}`,
    'Fix the cause of this failure; do not repeat the same approach unchanged.',
    '----- end of runplan failure report -----',
  ].join('\n');
  const base = prompt ?? '';
  return base === '' ? `${section}\n` : `${base.replace(/\n*$/, '')}\n\n${section}\n`;
}
