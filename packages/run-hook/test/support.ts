// Shared by run-hook's tests.
import { existsSync, readFileSync } from 'node:fs';
import { processIdentity, type ProcessIdentity } from '@runplan/settle';

// Polls for a pid file a fixture writes (another process's file: there is no event to wait
// on) until `done()`, and returns the identity of the process it names.
export async function waitForPid(file: string, done: () => boolean): Promise<ProcessIdentity | undefined> {
  while (!done()) {
    if (existsSync(file)) {
      const identity = processIdentity(Number(readFileSync(file, 'utf8').trim()));
      if (identity) return identity;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return undefined;
}
