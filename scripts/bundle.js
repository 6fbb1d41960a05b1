#!/usr/bin/env node
// A package's build step after `tsc` (run in the package's directory): makes what the
// package ships self-contained, so it installs from its tarball alone, with no registry.
//
// - dist/lib/: the library (dist/src/index.js) and the CLI (dist/src/cli.js), bundled by
//   esbuild with every dependency inlined — our own @runplan/* packages and the third-party
//   ones — into ES modules that share chunks, so the package's runtime `dependencies` are
//   none. Our own packages are inlined from their dist/src (never from their bundles), so
//   each bundle holds one copy of each module.
// - dist/types/<name>/: the declarations of this package and of every @runplan/* package
//   it inlines, with `@runplan/<name>` specifiers rewritten to relative paths.
//
// Why bundle rather than publish @runplan/common (and depend on the other tools by name):
// an install from a tarball must never resolve one of our names from the public registry
// (someone else may own the name there), and each tool must install on its own offline.
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join, relative } from 'node:path';
import { build } from 'esbuild';
import { placeholder, stampBundle } from './stamp.js';

const root = join(import.meta.dirname, '..');
const here = process.cwd();
const ours = /^@runplan\/([a-z-]+)$/;

// Where an @runplan/<name> package's built sources live in this checkout.
function packageDir(name) {
  const dir = join(root, 'packages', name);
  if (!existsSync(join(dir, 'package.json'))) throw new Error(`bundle: no package @runplan/${name} in ${root}/packages`);
  return dir;
}

// @runplan/* names this package's built sources import, transitively.
function ownDependencies(dir, seen = new Set()) {
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  for (const dep of Object.keys({ ...manifest.dependencies, ...manifest.devDependencies })) {
    const m = ours.exec(dep);
    if (m === null || m[1] === 'test-fixtures' || seen.has(m[1])) continue;
    seen.add(m[1]);
    ownDependencies(packageDir(m[1]), seen);
  }
  return seen;
}

// Every file under dir whose name ends with suffix.
function filesUnder(dir, suffix, out = []) {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) filesUnder(path, suffix, out);
    else if (entry.endsWith(suffix)) out.push(path);
  }
  return out;
}

const inlineOurs = {
  name: 'inline-runplan-sources',
  setup(b) {
    b.onResolve({ filter: /^@runplan\// }, (args) => {
      const m = ours.exec(args.path);
      if (m === null) return { errors: [{ text: `bundle: cannot inline ${args.path}` }] };
      return { path: join(packageDir(m[1]), 'dist', 'src', 'index.js') };
    });
  },
};

const entryPoints = { index: 'dist/src/index.js' };
if (existsSync(join(here, 'dist/src/cli.js'))) entryPoints.cli = 'dist/src/cli.js';
rmSync(join(here, 'dist/lib'), { recursive: true, force: true });
await build({
  absWorkingDir: here,
  entryPoints,
  outdir: 'dist/lib',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  chunkNames: 'chunk-[hash]',
  // Linked maps back to src/*.ts (through tsc's maps), for coverage and debugging here; not shipped.
  sourcemap: 'linked',
  sourcesContent: false,
  // CommonJS dependencies (write-file-atomic, fast-glob) call require() for Node's built-ins
  // and read __filename (write-file-atomic seeds its temp names with it).
  banner: {
    js: [
      "import { createRequire as __createRequire } from 'node:module';",
      "import { fileURLToPath as __fileURLToPath } from 'node:url';",
      'const require = __createRequire(import.meta.url);',
      'const __filename = __fileURLToPath(import.meta.url);',
    ].join(' '),
  },
  plugins: [inlineOurs],
  logLevel: 'warning',
  legalComments: 'none',
});

const self = JSON.parse(readFileSync(join(here, 'package.json'), 'utf8')).name.replace('@runplan/', '');

// runplan's CLI also as one CommonJS file, dist/lib/cli.cjs, which its bin runs with a V8 code
// cache (scripts/code-cache.js, the package's next build step): no ES module loader and no
// compile at start (packages/runplan/README.md, "Start-up"). The ES modules stay for the
// library and as the bin's fallback. `import.meta` is the bundle's own file, beside cli.js,
// so what the CLI reads relative to it (its package.json, build-id.js, the demo) is the same.
// Its first line is the build id's placeholder; stamping it here (scripts/stamp.js) also wraps
// it in its module function, before build-id.js hashes it.
if (self === 'runplan' && entryPoints.cli !== undefined) {
  await build({
    absWorkingDir: here,
    entryPoints: [entryPoints.cli],
    outfile: 'dist/lib/cli.cjs',
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    sourcemap: 'linked',
    sourcesContent: false,
    define: { 'import.meta.url': '__importMetaUrl', 'import.meta.dirname': '__dirname' },
    banner: {
      js: `${placeholder}'use strict';\nconst __importMetaUrl = require('node:url').pathToFileURL(__filename).href;`,
    },
    plugins: [inlineOurs],
    logLevel: 'warning',
    legalComments: 'none',
  });
  stampBundle(join(here, 'dist', 'lib', 'cli.cjs'));
}

// runplan's bundle says which code it is: dist/lib/build-id.js holds the sha256 of every file
// esbuild wrote there (names and bytes). Caches of what this code computed (the plan cache)
// are taken only by the code that made them; the unbundled dist/src has no such file.
if (self === 'runplan') {
  const lib = join(here, 'dist', 'lib');
  const hash = createHash('sha256');
  for (const name of readdirSync(lib)
    .filter((n) => n.endsWith('.js') || n.endsWith('.cjs'))
    .sort())
    hash.update(`${name}\0`).update(readFileSync(join(lib, name)));
  writeFileSync(
    join(lib, 'build-id.js'),
    `// The sha256 of this bundle's other files (scripts/bundle.js).\nexport const buildId = '${hash.digest('hex')}';\n`,
  );
}
const types = join(here, 'dist', 'types');
rmSync(types, { recursive: true, force: true });
for (const name of [self, ...ownDependencies(here)]) {
  const src = join(name === self ? here : packageDir(name), 'dist', 'src');
  for (const file of filesUnder(src, '.d.ts')) {
    const target = join(types, name, relative(src, file));
    mkdirSync(dirname(target), { recursive: true });
    const text = readFileSync(file, 'utf8').replace(/(['"])@runplan\/([a-z-]+)\1/g, (_, q, dep) => {
      let rel = relative(dirname(target), join(types, dep, 'index.js'));
      if (!rel.startsWith('.')) rel = `./${rel}`;
      return `${q}${rel}${q}`;
    });
    writeFileSync(target, text);
  }
}

// The runplan package ships its demo (the 13-task plan, its prompts, the mock agents it runs).
if (self === 'runplan') {
  const fixtures = join(root, 'test-fixtures');
  const demo = join(here, 'dist', 'demo');
  rmSync(demo, { recursive: true, force: true });
  cpSync(join(fixtures, 'plans', 'thirteen.toml'), join(demo, 'plans', 'thirteen.toml'));
  cpSync(join(fixtures, 'plans', 'prompts'), join(demo, 'plans', 'prompts'), { recursive: true });
  for (const agent of ['mock-agent', 'mock-gate']) cpSync(join(fixtures, 'agents', agent), join(demo, 'agents', agent));
}
