// The README's "Where each decision lives" map names only paths that exist, and has a row
// for every section of DESIGN.md it was written against.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const pkg = join(import.meta.dirname, '..', '..');
const repoRoot = join(pkg, '..', '..');

// The rows of the map: [section, the cell that names where it is decided].
function mapRows(): Array<[string, string]> {
  const readme = readFileSync(join(pkg, 'README.md'), 'utf8');
  const start = readme.indexOf('## Where each decision lives');
  assert.ok(start >= 0, 'the README has the map');
  const end = readme.indexOf('\n## ', start + 1);
  return readme
    .slice(start, end)
    .split('\n')
    .filter((l) => l.startsWith('| ') && !l.startsWith('| DESIGN.md') && !l.startsWith('| ---'))
    .map((l) => {
      const cells = l.split('|').map((c) => c.trim());
      return [cells[1]!, cells[2]!];
    });
}

test('every path the map names exists', () => {
  const rows = mapRows();
  assert.ok(rows.length >= 19, `a row per DESIGN.md section (${rows.length})`);
  for (const [section, cell] of rows) {
    // A bare file name (`load.ts`) is in the folder named before it in the same cell.
    let folder = '';
    for (const [, path] of cell.matchAll(/`([^`]+\/[^`]*|[^`]+\.ts)`/g)) {
      const named = path!.includes('/') ? path! : join(folder, path!);
      if (path!.endsWith('/')) folder = path!;
      const file = named.startsWith('packages/') ? join(repoRoot, named) : join(pkg, named);
      assert.ok(existsSync(file), `${section}: ${named} exists`);
    }
  }
});

test('the map has a row for each DESIGN.md section it covers', () => {
  const sections = mapRows().map(([s]) => s);
  for (const s of [
    'Plans',
    'State and git',
    'One attempt',
    'Resume and continuation',
    'Failure classes and repair',
    'Agent output and money',
    'CLI',
    'Output, status, stop',
    'Journal events (types)',
  ]) {
    assert.ok(sections.includes(s), `a row for ${s}`);
  }
});

test.run();
