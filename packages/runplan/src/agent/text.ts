import { boundMessage, scanBlocked } from './state.js';
import type { AgentState, LineInterpreter } from './state.js';

// Plain text output: only a `RUNPLAN: BLOCKED <reason>` line and the last non-empty line
// (the final message) mean anything. No session, tokens or cost.
export function textInterpreter(state: AgentState): LineInterpreter {
  return {
    line(text) {
      scanBlocked(state, text);
      const trimmed = text.trim();
      if (trimmed !== '') state.finalMessage = boundMessage(trimmed);
    },
    end() {},
  };
}
