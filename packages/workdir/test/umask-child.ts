// Test fixture: `node umask-child.js <octal umask> <bin.js> args...` runs a node bin with
// that umask, so mode tests need no shell.
import { pathToFileURL } from 'node:url';

const [mask, bin, ...rest] = process.argv.slice(2);
if (mask === undefined || bin === undefined) throw new Error('usage: umask-child.js MASK BIN [ARGS...]');
process.umask(Number.parseInt(mask, 8));
process.argv = [process.argv[0]!, bin, ...rest];
await import(pathToFileURL(bin).href);
