import { closeSync, fstatSync } from 'node:fs';
import { isatty } from 'node:tty';

/**
 * For `process.on('exit', ...)` in a bin: Node 20 aborts as it exits (an assertion in its
 * ResetStdio, exit 134 and a native stack trace instead of the tool's exit code) when it
 * restores the mode of a terminal that hung up while the tool ran: a tmux pane killed, an ssh
 * session dropped, with HUP ignored by the caller (nodejs/node#51519; later majors fixed it).
 * A standard fd on a terminal device (major 4, 5 or 136-143: ttys, consoles, ptys) that no
 * longer answers as a terminal is closed first: Node then leaves it alone. Never any other
 * device (/dev/null, /dev/zero). settle's and runplan's bins carry the same guard in their
 * own CommonJS, as they install it before their bundle loads.
 */
export function releaseHungUpTerminals(): void {
  for (const fd of [0, 1, 2]) {
    let major: number;
    try {
      const st = fstatSync(fd);
      if (!st.isCharacterDevice()) continue;
      major = Math.floor(st.rdev / 256) % 4096;
    } catch {
      continue;
    }
    if (!(major === 4 || major === 5 || (major >= 136 && major <= 143)) || isatty(fd)) continue;
    try {
      closeSync(fd);
    } catch {}
  }
}
