import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runBin, tempDir } from './helpers.js';
import { waitUntil } from './waits.js';

/** A command running in a terminal of its own (a detached tmux pane) that the test can hang up. */
export interface HangingTerminal {
  /** Where the command may write its files (`$T` in the command): removed by `cleanup`. */
  dir: string;
  /** Closes the terminal as a killed tmux pane or a dropped ssh session does (the pty hangs up). */
  hangUp(): Promise<void>;
  /** The exit status `sh` saw for the command, once it wrote it (bounded wait). */
  exitStatus(timeoutMs?: number): Promise<number>;
  cleanup(): Promise<void>;
}

// Runs `sh -c SCRIPT` in a detached tmux pane with HUP ignored in that sh (`trap '' HUP`), so
// the sh outlives the terminal and records what its command exited with. SCRIPT runs with
// `T` set to a scratch dir and must end by running the command under test; its status goes to
// $T/status. Each call has its own tmux server (socket in the scratch dir).
export async function inHangingTerminal(script: string, env: NodeJS.ProcessEnv): Promise<HangingTerminal> {
  const scratch = tempDir('runplan-hangup-');
  const socket = join(scratch.path, 'tmux.sock');
  const tmux = (args: string[]) => runBin('tmux', ['-S', socket, '-f', '/dev/null', ...args], { env, timeoutMs: 20_000 });
  const wrapped = `T=${shellQuote(scratch.path)}; export T; trap '' HUP; ${script}; echo $? > "$T/status"`;
  const started = await tmux(['new-session', '-d', '-x', '100', '-y', '20', 'sh', '-c', wrapped]);
  if (started.exitCode !== 0) throw new Error(`tmux new-session exited ${started.exitCode}: ${started.stderr}`);
  const status = join(scratch.path, 'status');
  return {
    dir: scratch.path,
    hangUp: async () => {
      await tmux(['kill-server']);
    },
    exitStatus: async (timeoutMs = 60_000) =>
      Number(
        await waitUntil(
          'the command in the hung-up terminal exits',
          () => existsSync(status) && /^\d+\n$/.test(readFileSync(status, 'utf8')) && readFileSync(status, 'utf8').trim(),
          { timeoutMs },
        ),
      ),
    cleanup: async () => {
      await tmux(['kill-server']);
      scratch.cleanup();
    },
  };
}

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}
