// What `settle --help` and `--version` print, and the usage line a usage error ends with.

export const usageLine =
  'settle [--deadline DUR] [--grace DUR] [--kill-after DUR] [--signal NAME] [--stall DUR] [--preserve-status] [--input FILE|-] [--report FILE] [--ownership MODE] [--cgroup-parent DIR] [--cwd DIR] [--env K=V]... -- CMD [ARGS...]';

/** Kept equal to package.json's version by a test (the bundle cannot read package.json cheaply). */
export const settleVersion = '0.1.0';

export const helpText = `Run one command with a deadline, tear down everything it started, exit like GNU timeout.

Usage:
  ${usageLine}

Options:
  --deadline DUR   end the command after DUR (500ms, 30s, 10m, 2h, 1d; a bare number is
                   seconds, as in GNU timeout); 0 or absent: none
  --grace DUR      how long a signalled tree, or the output of an exited one, may take
                   before KILL / before the pipes are abandoned; default 5s. It also bounds
                   a pipe still held open after the command exited
  -k, --kill-after DUR
                   the wait between the first signal and KILL alone; default: --grace.
                   0: KILL right after the first signal (GNU's -k 0 sends no KILL)
  -s, --signal NAME
                   the first signal at the deadline (TERM, INT, HUP, ...); default TERM
  --stall DUR      no stdout for DUR ends the command like a deadline; 0: none
  -p, --preserve-status
                   exit with the command's own status even when it timed out
  --input FILE|-   write FILE to the command's stdin through a pipe; '-' (the default)
                   passes settle's own stdin
  --report FILE    write one JSON object (reason, exit codes, signal, duration, teardown,
                   first transport error, bytes in/out) atomically to FILE
  --ownership MODE how the command's processes are owned: auto (the default: a cgroup v2
                   cgroup of its own when one can be made, else its process group plus
                   an environment tag), cgroup (exit 125 when none can be made), group+tag
  --cgroup-parent DIR
                   the cgroup v2 directory to make the command's cgroup in; default:
                   settle's own cgroup's directory
  --cwd DIR        run the command in DIR
  --env K=V        set a variable for the command (repeatable)
  -h, --help       show this help
  --version        print settle's version

stdout and stderr pass through byte for byte. SIGINT/SIGTERM/SIGHUP to settle tear the
command's tree down and exit 128+N; SIGALRM is a timeout (124). SIGQUIT, SIGUSR1,
SIGUSR2, SIGPIPE, SIGXCPU and SIGXFSZ are passed on to the command's process group and
settle keeps waiting: the command's fate decides the exit code.

Exit codes:
  N        the command's own exit code
  124      the deadline expired, or the command stalled, even when KILL was needed
           (GNU timeout exits 137 then; settle keeps 124 and --report says escalated)
  125      settle itself failed: usage error, missing --cwd or --input, report not
           written, --ownership cgroup without a usable cgroup, or a teardown it
           could not verify (outranks 124)
  126      the command is not executable
  127      the command was not found
  128+N    the command was killed by signal N (or settle was, and tore it down)
`;
