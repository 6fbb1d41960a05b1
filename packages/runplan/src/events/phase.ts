/** The phase named in a failure: the step of "One attempt" (or the run) that failed. */
export type Phase = 'setup' | 'pre_run' | 'command' | 'gates' | 'post_run' | 'commit' | 'integrate' | 'land' | 'run';
