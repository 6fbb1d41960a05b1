import { tmpdir } from 'node:os';
import { canonicalJson, sha256Hex } from '../plan/digest.js';
import type { AttemptFailureData } from '../events/types.js';

/**
 * What a failure's fingerprint is made of: the failure's class and evidence tail (the one
 * failure shape, AttemptFailureData) and where the attempt started from. Reason and phase
 * are not part of it.
 */
export interface FingerprintInput extends Pick<AttemptFailureData, 'class' | 'evidenceTail'> {
  /** The integration head the attempt started from. */
  baseCommit: string;
  contractDigest: string;
}

/**
 * Evidence with what differs between two runs of the same failure masked, so identical
 * failures get identical fingerprints: ANSI colours, the attempt's own paths, temp paths,
 * UUIDs, timestamps, clock times, hex ids (>= 7 hex digits holding a digit), durations and
 * pids. Line endings and trailing spaces are normalized too.
 */
export function normalizeEvidence(text: string, ownPaths: readonly string[], opts: { tmpDir?: string } = {}): string {
  let out = text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r\n?/g, '\n');
  for (const path of [...ownPaths].filter((p) => p.length > 1).sort((a, b) => b.length - a.length)) {
    out = out.split(path).join('<own>');
  }
  const tmp = (opts.tmpDir ?? tmpdir()).replace(/\/+$/, '');
  const tmpRoots = [...new Set([tmp, '/tmp', '/var/tmp', '/private/tmp', '/var/folders'])].filter((p) => p.length > 1);
  for (const root of tmpRoots.sort((a, b) => b.length - a.length)) {
    const escaped = root.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    out = out.replace(new RegExp(`(?<![\\w.-])${escaped}(?:/[^\\s'"\`:,;()\\[\\]{}<>]*)?(?![\\w-])`, 'g'), '<tmp>');
  }
  out = out
    .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '<uuid>')
    .replace(/\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b/g, '<time>')
    .replace(/\b\d{8}T\d{6}(?:\.\d+)?Z?\b/g, '<time>')
    .replace(/\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b/g, '<time>')
    .replace(/\b(?=[0-9a-f]*\d)[0-9a-f]{7,}\b/gi, '<hex>')
    .replace(/\b\d+(?:\.\d+)?(?:ns|us|\u00B5s|ms|s|m|h)\b/g, '<dur>')
    .replace(/\b\d+(?:\.\d+)? ?(?:secs?|seconds?|mins?|minutes?|hours?|milliseconds?)\b/gi, '<dur>')
    .replace(/\b(pid|PID|Pid)([ =:#]*)\d+\b/g, '$1$2<pid>')
    // `process 48213`, a log line's `node[1220]:`: three digits at least, so a count or an
    // index (`process 3 of 8`, `expected[3]:`) stays as it is.
    .replace(/\b(process|Process)([ =:#]*)\d{3,}\b/g, '$1$2<pid>')
    .replace(/\b([A-Za-z][\w.-]*)\[\d{3,}\]:/g, '$1[<pid>]:');
  return out
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .trim();
}

// sha256 over class, normalized evidence, base commit and contract digest.
export function failureFingerprint(f: FingerprintInput, ownPaths: readonly string[], opts: { tmpDir?: string } = {}): string {
  return sha256Hex(
    canonicalJson({
      class: f.class,
      evidence: normalizeEvidence(f.evidenceTail, ownPaths, opts),
      baseCommit: f.baseCommit,
      contractDigest: f.contractDigest,
    }),
  );
}
