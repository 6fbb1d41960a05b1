/**
 * What validation found. A torn tail is the normal remains of a crash mid-write (the
 * final line has no newline, or holds the zero bytes of blocks that never reached the
 * disk) and is repairable; anything else wrong is corruption and is never repaired.
 *
 *   clean ── crash mid-append ──▶ torn_tail ── repair (keeps .broken) ──▶ clean
 *   clean ── edit / bit flip / splice / lost line ──▶ corrupt (fail closed, changes nothing)
 */
export type JournalStatus =
  | { kind: 'clean' }
  | {
      kind: 'torn_tail';
      /** Byte offset where the torn final line starts; the valid prefix ends here. */
      offset: number;
      /** `no_newline`, `nul_bytes` (zero-filled sectors) or `empty` (no header at all). */
      detail?: string;
    }
  | {
      kind: 'corrupt';
      offset: number;
      /** The offending line's seq when it could be read, else null. */
      seq: number | null;
      /** Slug: crc_mismatch, seq_gap, seq_repeat, chain_broken, not_json, bad_record, after_terminal, second_terminal, bom, crlf, foreign_line, record_too_large, no_header, bad_header, nul_bytes, missing_newline. */
      reason: CorruptReason;
      /** The seq the line should have had. */
      expectedSeq: number;
      /** One sentence for people. */
      detail: string;
    };

export type CorruptReason =
  | 'crc_mismatch'
  | 'seq_gap'
  | 'seq_repeat'
  | 'chain_broken'
  | 'not_json'
  | 'bad_record'
  | 'after_terminal'
  | 'second_terminal'
  | 'bom'
  | 'crlf'
  | 'foreign_line'
  | 'record_too_large'
  | 'no_header'
  | 'bad_header'
  | 'nul_bytes'
  | 'missing_newline';

// One line naming where a journal went wrong, for messages.
export function describeStatus(path: string, status: JournalStatus): string {
  switch (status.kind) {
    case 'clean':
      return `${path} is clean`;
    case 'torn_tail':
      if (status.detail === 'empty') return `${path} is empty: not even its header was written (a crash while creating it)`;
      return `${path} has a torn tail at byte ${status.offset} (${status.detail === 'nul_bytes' ? 'zero-filled bytes' : 'the last line has no newline'}: a crash mid-write)`;
    case 'corrupt':
      return `${path} is corrupt at byte ${status.offset} (${status.seq === null ? `expected seq ${status.expectedSeq}` : `seq ${status.seq}`}): ${status.reason}: ${status.detail}`;
  }
}
