// Splits a byte stream into lines at '\n' bytes. Chunks may end anywhere — mid-line or in
// the middle of a UTF-8 character — so bytes are held until their line is complete and
// only whole lines are decoded.
export class LineSplitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private skipping = false;

  /** @param maxLineBytes longer lines are dropped (onOverlong is told) rather than held in memory. */
  constructor(
    private readonly onLine: (line: string) => void,
    private readonly onOverlong: (bytes: number) => void,
    private readonly maxLineBytes = 16 * 1024 * 1024,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (let nl = chunk.indexOf(0x0a, start); nl !== -1; nl = chunk.indexOf(0x0a, start)) {
      this.hold(chunk.subarray(start, nl));
      this.flushLine();
      start = nl + 1;
    }
    if (start < chunk.length) this.hold(chunk.subarray(start));
  }

  /** The final line when the stream did not end with a newline. */
  end(): void {
    if (this.pendingBytes > 0 || this.skipping) this.flushLine();
  }

  private hold(part: Buffer): void {
    if (part.length === 0) return;
    if (this.skipping) {
      this.pendingBytes += part.length;
      return;
    }
    this.pending.push(Buffer.from(part));
    this.pendingBytes += part.length;
    if (this.pendingBytes > this.maxLineBytes) {
      this.pending = [];
      this.skipping = true;
    }
  }

  private flushLine(): void {
    if (this.skipping) this.onOverlong(this.pendingBytes);
    else this.onLine(Buffer.concat(this.pending, this.pendingBytes).toString('utf8'));
    this.pending = [];
    this.pendingBytes = 0;
    this.skipping = false;
  }
}
