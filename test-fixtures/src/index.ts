export { fixture, shFixture, runBin, binPath, parseJsonLines, tempDir, withTimeout } from './helpers.js';
export type { BinResult, TempDir } from './helpers.js';
export { agentsPath, envWithAgents, fixturePlan, gitEnv, gitRepo, plansPath, transcriptPath, writePlan } from './git.js';
export type { GitRepo, GitRepoOptions, WritePlanOptions } from './git.js';
export { dispatchCounts, gateCounts, readGateEnv, readLedger, readPids, savedPrompts } from './ledger.js';
export type { GateEnvEntry, LedgerEntry } from './ledger.js';
export { expectVersionFrom, packageVersionOf } from './version-check.js';
export { alive, killAll, waitForLine, waitUntil, withCleanup } from './waits.js';
export type { Disposable, WaitOptions } from './waits.js';
