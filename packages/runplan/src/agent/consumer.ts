import type { Readable } from 'node:stream';
import type { AgentFormat } from '../plan/types.js';
import { BreakableDestination, unreachable } from '@runplan/common';
import { claudeInterpreter } from './claude.js';
import { codexInterpreter } from './codex.js';
import { cursorInterpreter } from './cursor.js';
import { geminiJsonInterpreter, geminiStreamInterpreter } from './gemini.js';
import { LineSplitter } from './lines.js';
import { initialAgentState, warn } from './state.js';
import type { AgentState, LineInterpreter } from './state.js';
import { textInterpreter } from './text.js';

export { initialAgentState, totalTokens, FINAL_MESSAGE_BYTES } from './state.js';
export type { AgentState, Usage } from './state.js';

export interface ConsumerOptions {
  /** Every stdout byte is written here as it arrives (the attempt's transcript). */
  transcript?: NodeJS.WritableStream;
  /** Called after each line with the (mutated) state: progress, live usage. */
  onState?: (state: AgentState) => void;
  /**
   * After a terminal line, stdout silent this long calls `finish` (the agent hangs after its
   * final line); any later byte cancels the timer.
   */
  resultGraceMs?: number;
  /** Ends the child (settle's `finish`). */
  finish?: () => void;
}

// The interpreter of one format, mutating `state`.
export function interpreterFor(format: AgentFormat, state: AgentState): LineInterpreter {
  switch (format) {
    case 'claude-stream-json':
      return claudeInterpreter(state);
    case 'codex-json':
      return codexInterpreter(state);
    case 'gemini-stream-json':
      return geminiStreamInterpreter(state);
    case 'gemini-json':
      return geminiJsonInterpreter(state);
    case 'cursor-stream-json':
      return cursorInterpreter(state);
    case 'text':
      return textInterpreter(state);
    default:
      return unreachable(format);
  }
}

// A consumer for settle.stream: reads stdout to its end, copies every byte to the
// transcript, interprets whole lines into `state`. Never throws: a read error or a failed
// transcript comes back as an Error value, with everything interpreted so far kept in state.
export function agentConsumer(
  format: AgentFormat,
  opts: ConsumerOptions = {},
): (stdout: Readable, state: AgentState) => Promise<void | Error> {
  return async (stdout, state) => {
    const interpreter = interpreterFor(format, state);
    let graceTimer: NodeJS.Timeout | undefined;
    const splitter = new LineSplitter(
      (line) => {
        state.lines++;
        state.terminal = false;
        interpreter.line(line);
        opts.onState?.(state);
        if (state.terminal && opts.finish !== undefined && opts.resultGraceMs !== undefined) {
          clearTimeout(graceTimer);
          graceTimer = setTimeout(opts.finish, opts.resultGraceMs);
        }
      },
      (bytes) => {
        state.lines++;
        warn(state, `line ${state.lines} dropped: ${bytes} bytes without a newline`);
      },
    );
    const transcript = opts.transcript ? new BreakableDestination(opts.transcript) : undefined;
    let failure: Error | undefined;
    try {
      for await (const chunk of stdout) {
        const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : (chunk as Buffer);
        clearTimeout(graceTimer);
        if (transcript) await transcript.send(bytes);
        splitter.push(bytes);
      }
    } catch (e) {
      failure = e instanceof Error ? e : new Error(String(e));
    }
    clearTimeout(graceTimer);
    splitter.end();
    interpreter.end();
    opts.onState?.(state);
    if (transcript?.error) {
      warn(state, `transcript not written: ${transcript.error.message}`);
      failure ??= Object.assign(new Error(`transcript write failed: ${transcript.error.message}`, { cause: transcript.error }), {
        code: 'transcript_failed',
      });
    }
    return failure;
  };
}

// Recomputes the state from a saved transcript (resume after a crash: usage still counts).
export function interpretTranscript(format: AgentFormat, text: string | Buffer): AgentState {
  const state = initialAgentState(format);
  const interpreter = interpreterFor(format, state);
  const splitter = new LineSplitter(
    (line) => {
      state.lines++;
      interpreter.line(line);
    },
    (bytes) => {
      state.lines++;
      warn(state, `line ${state.lines} dropped: ${bytes} bytes without a newline`);
    },
  );
  splitter.push(typeof text === 'string' ? Buffer.from(text, 'utf8') : text);
  splitter.end();
  interpreter.end();
  return state;
}
