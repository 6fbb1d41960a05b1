import type { ChildProcess } from 'node:child_process';
import type { PromptFailure } from './input.js';
import { codeOf, messageOf } from './preflight.js';
import type { SettleEvent, TransportError } from './types.js';

/** The first I/O or startup failure of a call; later ones never replace it, and none count once we close out. */
export class FirstError {
  first: TransportError | undefined;
  /** Set when settle itself destroys the pipes: errors from then on are its own doing. */
  closingOut = false;
  constructor(private readonly emit: (event: SettleEvent) => void) {}
  record(error: TransportError): void {
    if (this.first) return;
    this.first = error;
    this.emit({ type: 'transport-error', error });
  }
}

// Read errors of the child's pipes, recorded unless settle is closing them itself.
export function listenForErrors(child: ChildProcess, errors: FirstError): void {
  child.stdin?.on('error', () => {}); // failures are read from the write callbacks in feedPrompt
  child.stdout?.on('error', (cause) => {
    if (!errors.closingOut) {
      errors.record({ code: codeOf(cause) ?? 'EIO', where: 'stdout', message: `reading stdout: ${messageOf(cause)}`, cause });
    }
  });
  child.stderr?.on('error', (cause) => {
    if (!errors.closingOut) {
      errors.record({ code: codeOf(cause) ?? 'EIO', where: 'stderr', message: `reading stderr: ${messageOf(cause)}`, cause });
    }
  });
}

// A prompt failure as a transport error. Node destroys the child's stdin when the child
// exits; a write cut off that way is the same broken pipe as EPIPE.
export function promptError(failure: PromptFailure, childExited: boolean): TransportError {
  const code = codeOf(failure.error) ?? 'EIO';
  if (failure.stage === 'read') {
    return { code, where: 'input', message: `reading the input: ${messageOf(failure.error)}`, cause: failure.error };
  }
  if (code === 'ERR_STREAM_DESTROYED' && childExited) {
    return {
      code: 'EPIPE',
      where: 'stdin',
      message: 'writing the prompt: the child exited before reading all of it',
      cause: failure.error,
    };
  }
  return { code, where: 'stdin', message: `writing the prompt: ${messageOf(failure.error)}`, cause: failure.error };
}
