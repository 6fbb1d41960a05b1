import { isAlive, type ProcessIdentity } from './identity.js';
import { continueStopped, relayJobStop, stopTagged } from './job-control.js';

// Signals to settle that tear the command's tree down; settle then exits 128+N (SIGALRM: 124, a timeout).
const teardownSignals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGALRM'];
// Signals to settle passed on to the command's process group while settle keeps waiting, as
// GNU timeout does: the command's fate decides the exit code. SEGV, BUS, FPE and ILL are not
// safe to handle in Node; PROF and VTALRM belong to the profiler (README, Limits).
const relayedSignals: NodeJS.Signals[] = ['SIGQUIT', 'SIGUSR1', 'SIGUSR2', 'SIGPIPE', 'SIGXCPU', 'SIGXFSZ'];

export interface SignalListeners {
  /** Aborted with the signal's name when a teardown signal reaches settle. */
  controller: AbortController;
  /** The command's process group leader as recorded at spawn; undefined before it. */
  child: () => ProcessIdentity | undefined;
  /**
   * With --input FILE settle writes the command's stdin itself, and the SIGPIPE its own
   * EPIPE raises there looks like one sent to settle: SIGPIPE stays ignored then (Limits).
   */
  feedsStdin: boolean;
  /** The command's ownerTag once spawned: a Ctrl-Z stops every process carrying it. */
  tag?: () => string | undefined;
}

// Starts listening for the signals settle acts on while the command runs; returns what stops
// the teardown listeners once it has settled.
export function listenForSignals({ controller, child, feedsStdin, tag }: SignalListeners): () => void {
  const onSignal = (signal: NodeJS.Signals) => controller.abort(signal);
  // Relayed only while our child is the leader we recorded: the group is never a stranger's.
  const onRelayed = (signal: NodeJS.Signals) => {
    const leader = child();
    if (!leader || !isAlive(leader)) return;
    try {
      process.kill(-leader.pid, signal);
    } catch {
      // the group is gone
    }
  };
  // SIGTSTP (Ctrl-Z) reaches settle alone: the command leads a session of its own, where GNU
  // timeout's shares its group and stops with it. So settle stops the command's group (SIGSTOP:
  // a TSTP to a group of another session is orphaned, and the kernel drops it), then itself;
  // the SIGCONT that resumes settle (fg, bg) resumes the group it stopped. In an orphaned
  // group (setsid, cron, a shell gone) nothing would resume them: the TSTP is ignored there,
  // as the kernel ignores it for a process that does not handle it (relayJobStop). Stopped:
  // the command's group and whatever left it carrying its tag (a `setsid` descendant).
  const stopJob = relayJobStop(() => {
    const leader = child();
    let stoppedGroup = false;
    if (leader && isAlive(leader)) {
      try {
        process.kill(-leader.pid, 'SIGSTOP');
        stoppedGroup = true;
      } catch {
        // the group is gone
      }
    }
    const own = tag?.();
    const tagged = own !== undefined ? stopTagged({ tags: [own] }) : [];
    return () => {
      continueStopped(tagged);
      if (stoppedGroup) onRelayed('SIGCONT');
    };
  });
  for (const s of teardownSignals) process.on(s, onSignal);
  for (const s of relayedSignals) if (!(feedsStdin && s === 'SIGPIPE')) process.on(s, onRelayed);
  return () => {
    for (const s of teardownSignals) process.off(s, onSignal);
    stopJob();
    // The relay stays: removing the last SIGPIPE listener restores SIGPIPE's default action
    // (not the ignore Node starts with), and settle's own write to a closed stderr would kill it.
  };
}
