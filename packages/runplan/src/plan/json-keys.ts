// A JSON plan's keys given twice in one object: JSON.parse keeps the last one silently (a
// second `tasks` dropped the first list whole), where a TOML plan refuses a key defined twice.

/** The first key given twice in one object of `text` (valid JSON), with its line and column; undefined when none is. */
export function duplicateJsonKey(text: string): { key: string; line: number; column: number } | undefined {
  // One entry per open object (its keys so far) or array (undefined).
  const open: (Set<string> | undefined)[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      const start = i;
      for (i++; text[i] !== '"'; i += text[i] === '\\' ? 2 : 1);
      i++;
      const keys = open.at(-1);
      if (keys === undefined) continue;
      let j = i;
      while (j < text.length && ' \t\n\r'.includes(text[j]!)) j++;
      if (text[j] !== ':') continue;
      const key = JSON.parse(text.slice(start, i)) as string;
      if (keys.has(key)) {
        const before = text.slice(0, start).split('\n');
        return { key, line: before.length, column: before.at(-1)!.length + 1 };
      }
      keys.add(key);
      continue;
    }
    if (c === '{') open.push(new Set());
    else if (c === '[') open.push(undefined);
    else if (c === '}' || c === ']') open.pop();
    i++;
  }
  return undefined;
}
