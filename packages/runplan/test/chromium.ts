import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { runBin, tempDir } from '@runplan/test-fixtures';

// Headless Chromium as a person's browser for the report tests: the DOM after the page's
// script ran, every console message, and a screenshot's pixels.

export interface Rendered {
  dom: string;
  /** Every console message the page logged (CSP violations included). */
  console: string[];
  /** Pixels of the screenshot that differ from the page background (white). */
  inked: number;
  pixels: number;
}

// Loads `file` twice (DOM, then screenshot) in a fresh profile.
export async function render(file: string, size = { width: 1200, height: 1000 }): Promise<Rendered> {
  const profile = tempDir('runplan-chromium-');
  try {
    const common = [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      `--user-data-dir=${profile.path}`,
      '--enable-logging=stderr',
      '--v=0',
      `--window-size=${size.width},${size.height}`,
    ];
    const dom = await runBin('chromium', [...common, '--dump-dom', `file://${file}`], { timeoutMs: 90_000 });
    if (dom.exitCode !== 0) throw new Error(`chromium --dump-dom exited ${dom.exitCode}: ${dom.stderr}`);
    const png = join(profile.path, 'shot.png');
    const shot = await runBin('chromium', [...common, `--screenshot=${png}`, `file://${file}`], { timeoutMs: 90_000 });
    if (shot.exitCode !== 0) throw new Error(`chromium --screenshot exited ${shot.exitCode}: ${shot.stderr}`);
    const consoleLines = [dom.stderr, shot.stderr].flatMap((s) => s.split('\n').filter((l) => /:CONSOLE[:(]/.test(l)));
    const { inked, pixels } = inkOf(readFileSync(png));
    return { dom: dom.stdout, console: consoleLines, inked, pixels };
  } finally {
    profile.cleanup();
  }
}

// Decodes an 8-bit RGB/RGBA PNG and counts the pixels that are not white.
export function inkOf(png: Buffer): { inked: number; pixels: number } {
  const width = png.readUInt32BE(16);
  const height = png.readUInt32BE(20);
  const depth = png[24]!;
  const colour = png[25]!;
  if (depth !== 8 || (colour !== 2 && colour !== 6)) throw new Error(`PNG of depth ${depth}, colour type ${colour}: not decoded here`);
  const bpp = colour === 6 ? 4 : 3;
  const idat: Buffer[] = [];
  for (let at = 8; at < png.length; ) {
    const length = png.readUInt32BE(at);
    const type = png.toString('latin1', at + 4, at + 8);
    if (type === 'IDAT') idat.push(png.subarray(at + 8, at + 8 + length));
    at += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * bpp;
  let prev = Buffer.alloc(stride);
  let inked = 0;
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    const line = Buffer.from(raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1)));
    for (let i = 0; i < stride; i++) {
      const a = i >= bpp ? line[i - bpp]! : 0;
      const b = prev[i]!;
      const c = i >= bpp ? prev[i - bpp]! : 0;
      const p = a + b - c;
      const pa = Math.abs(p - a);
      const pb = Math.abs(p - b);
      const pc = Math.abs(p - c);
      const paeth = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      const add = [0, a, b, (a + b) >> 1, paeth][filter] ?? 0;
      line[i] = (line[i]! + add) & 0xff;
    }
    for (let x = 0; x < width; x++) {
      const o = x * bpp;
      if (line[o] !== 255 || line[o + 1] !== 255 || line[o + 2] !== 255) inked++;
    }
    prev = line;
  }
  return { inked, pixels: width * height };
}
