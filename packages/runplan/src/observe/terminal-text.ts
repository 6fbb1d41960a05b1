// Text for a terminal: what an agent wrote (failure messages, evidence tails) reaches stderr
// through here, so no control sequence of its (ESC, OSC titles, C1) acts on the operator's terminal.

// Every C0 and C1 control character, DEL and ESC included, shown as `\xNN`.
export function showControls(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}
