// A hostile agent for the report and terminal tests: its error text is markup and a terminal control sequence.

export const HOSTILE = '</script><img src=x onerror=alert(1)>';
// An agent whose result (is_error) says HOSTILE, then an OSC window-title sequence (ESC … BEL, JSON-escaped as a real agent writes it).
/** ESC ]0;pwned BEL as JSON escapes (written out literally: the agent's JSON carries them escaped). */
export const OSC_JSON = '\\u001b]0;pwned\\u0007';
export const HOSTILE_PLAN = `slug = "hostile"
base = "main"
[defaults]
format = "claude-stream-json"
expect = "none"
deadline = "1m"
grace = "2s"

[[tasks]]
id = "evil"
command = ["/bin/sh", "-c", '''printf '%s\\n' '{"type":"result","subtype":"error_during_execution","is_error":true,"result":"</script><img src=x onerror=alert(1)> ${OSC_JSON}","total_cost_usd":0.01}' ''']
repair = { task = 1 }
`;
