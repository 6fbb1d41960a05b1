/**
 * Bounded, UTF-8-safe tails: the last N bytes of some output, never with a character cut in
 * half at the front (a multi-byte character the window's start falls inside is dropped).
 * One rule for every tail runplan keeps as evidence, prints or fingerprints.
 */

// How many bytes at the front of `bytes` continue a character that began before it.
function continuationBytes(bytes: Buffer): number {
  let skip = 0;
  while (skip < bytes.length && skip < 3 && (bytes[skip]! & 0xc0) === 0x80) skip++;
  return skip;
}

// The last `limit` bytes of `bytes` as text; a character cut by the window's start is dropped.
export function utf8Tail(bytes: Buffer, limit: number): string {
  if (bytes.length <= limit) return bytes.toString('utf8');
  const window = bytes.subarray(bytes.length - limit);
  return window.subarray(continuationBytes(window)).toString('utf8');
}

// The end of `text` that fits in `limit` UTF-8 bytes (the whole text when it fits).
export function textTail(text: string, limit: number): string {
  if (text.length * 3 <= limit) return text;
  return utf8Tail(Buffer.from(text, 'utf8'), limit);
}

/** Keeps the last `limit` bytes written to it, in bounded memory however much arrives. */
export class TailBuffer {
  private chunks: Buffer[] = [];
  private held = 0;
  /** Every byte ever written, including the ones dropped from the front. */
  total = 0;
  /** The last byte written, or undefined before any (a CLI uses it to end a line). */
  lastByte: number | undefined;

  constructor(private readonly limit: number) {}

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.total += chunk.length;
    this.lastByte = chunk[chunk.length - 1];
    const kept = chunk.length > this.limit ? chunk.subarray(chunk.length - this.limit) : chunk;
    this.chunks.push(Buffer.from(kept));
    this.held += kept.length;
    while (this.held - this.chunks[0]!.length >= this.limit) this.held -= this.chunks.shift()!.length;
  }

  bytes(): Buffer {
    const all = Buffer.concat(this.chunks);
    return all.length > this.limit ? all.subarray(all.length - this.limit) : all;
  }

  // The tail as text; a multi-byte character cut by the window's start is dropped, not garbled.
  text(): string {
    const bytes = this.bytes();
    return this.total > bytes.length ? bytes.subarray(continuationBytes(bytes)).toString('utf8') : bytes.toString('utf8');
  }
}
