export { fixture, shFixture, runBin, binPath, parseJsonLines, tempDir, withTimeout } from './helpers.js';
export type { BinResult, TempDir } from './helpers.js';
