// The tools install outside this monorepo: `npm pack` each package, install the tarballs
// offline (a registry that cannot answer, so nothing is fetched by name) into an empty global
// prefix and into a fresh project; then every installed bin answers --version and --help, the
// libraries import by name, and `runplan demo` runs from outside the checkout.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { fixture, runBin, tempDir, withCleanup } from '@runplan/test-fixtures';

const TOOLS = ['settle', 'workdir', 'run-hook', 'journal', 'runplan'] as const;
const repoRoot = fixture('..');

// An environment with none of the checkout on PATH, npm offline, and a registry nobody answers.
function outsideEnv(dir: string, bin: string): NodeJS.ProcessEnv {
  return {
    PATH: `${bin}:/usr/local/bin:/usr/bin:/bin`,
    HOME: process.env.HOME,
    TMPDIR: join(dir, 'tmp'),
    LANG: 'C.UTF-8',
    npm_config_offline: 'true',
    npm_config_registry: 'http://127.0.0.1:9/',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
  };
}

// Runs npm (found on the test's own PATH) and fails the test with its stderr when it fails.
async function npm(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  const r = await runBin('npm', args, { cwd, env: { ...env, PATH: process.env.PATH }, timeoutMs: 60_000 });
  assert.is(r.exitCode, 0, `npm ${args.join(' ')} in ${cwd}: ${r.stderr}`);
  return r.stdout;
}

test(
  'packed tarballs install offline and every bin, library and the demo work outside the checkout',
  withCleanup(
    150_000,
    () => tempDir('runplan-install-'),
    async (dir) => {
      for (const d of ['packs', 'project', 'prefix', 'work', 'tmp']) mkdirSync(join(dir.path, d));
      const env = outsideEnv(dir.path, join(dir.path, 'prefix', 'bin'));
      const tarballs: string[] = [];
      for (const tool of TOOLS) {
        const out = await npm(['pack', '--silent', '--pack-destination', join(dir.path, 'packs')], join(repoRoot, 'packages', tool), env);
        tarballs.push(join(dir.path, 'packs', out.trim().split('\n').at(-1)!));
      }

      // Into an empty global prefix, each tool its own package: every bin answers from there,
      // from a directory outside the checkout.
      await npm(['install', '--global', '--prefix', join(dir.path, 'prefix'), ...tarballs], join(dir.path, 'work'), env);
      for (const tool of TOOLS) {
        const installed = join(dir.path, 'prefix', 'lib', 'node_modules', '@runplan', tool);
        const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as Record<string, unknown>;
        assert.is(manifest.private, undefined, `${tool} is not private`);
        assert.is(manifest.dependencies, undefined, `${tool} has no runtime dependencies (ours and the third-party ones are bundled)`);
        assert.not.ok(existsSync(join(installed, 'node_modules')), `${tool} installed nothing beside itself`);
        const bin = join(dir.path, 'prefix', 'bin', tool);
        const version = await runBin(bin, ['--version'], { cwd: join(dir.path, 'work'), env });
        assert.is(version.exitCode, 0, `${tool} --version: ${version.stderr}`);
        assert.is(version.stdout, `${tool} ${manifest.version as string}\n`);
        const help = await runBin(bin, ['--help'], { cwd: join(dir.path, 'work'), env });
        assert.is(help.exitCode, 0, `${tool} --help: ${help.stderr}`);
        assert.match(help.stdout, /usage/i, `${tool} --help prints its usage`);
      }

      // Into a fresh project: each library imports by name and ships its typings.
      writeFileSync(join(dir.path, 'project', 'package.json'), '{"name":"outside","private":true,"type":"module"}\n');
      await npm(['install', ...tarballs], join(dir.path, 'project'), env);
      for (const tool of TOOLS)
        assert.ok(
          existsSync(join(dir.path, 'project', 'node_modules', '@runplan', tool, 'dist', 'types', tool, 'index.d.ts')),
          `${tool} ships its types`,
        );
      const imported = await runBin(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `for (const t of ${JSON.stringify(TOOLS)}) { const m = await import('@runplan/' + t); console.log(t, Object.keys(m).length); }`,
        ],
        { cwd: join(dir.path, 'project'), env },
      );
      assert.is(imported.exitCode, 0, imported.stderr);
      for (const tool of TOOLS) assert.match(imported.stdout, new RegExp(`^${tool} [1-9]`, 'm'), `${tool}'s library imports`);

      // The demo, from the prefix, outside the checkout: its plan and mock agents ship in the package.
      const demo = await runBin(join(dir.path, 'prefix', 'bin', 'runplan'), ['demo'], {
        cwd: join(dir.path, 'work'),
        env,
        timeoutMs: 90_000,
      });
      assert.is(demo.exitCode, 0, demo.stderr);
      assert.match(demo.stderr, /runplan: complete: 13 task\(s\)/);
      const report = /^ {2}report: (\S+)$/m.exec(demo.stderr);
      assert.ok(report && existsSync(report[1]!), `the demo wrote its report: ${demo.stderr.slice(-400)}`);
      assert.ok(report![1]!.startsWith(join(dir.path, 'tmp')), 'the demo ran in the scratch TMPDIR');
    },
  ),
);

test.run();
