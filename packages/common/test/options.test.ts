import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cac } from 'cac';
import { asTyped, dashLedValues, typedValue, typedValues, usageAsTyped } from '../src/index.js';

// What cac (mri) parses for argv with one string option `--x <v>` (repeatable) and a flag `--b`.
function parsed(argv: string[]): Record<string, unknown> {
  const cli = cac('t');
  cli.command('c', '').option('--x <v>', '').option('--b', '').option('--long-name <v>', '').allowUnknownOptions();
  return cli.parse(['node', 't', 'c', ...argv], { run: false }).options;
}

test('values are read as typed: no number casting', () => {
  assert.equal(typedValues(['--x', '007', '--x=1e3', '--x', '0042'], 'x'), ['007', '1e3', '0042']);
  assert.is(typedValue(['--x', '1', '--x', '2'], 'x'), '2');
  assert.is(typedValue([], 'x'), undefined);
});

test('consumed as mri consumes them, so the count always agrees with cac', () => {
  const cases: string[][] = [
    ['--x', '007'],
    ['--x=007'],
    ['--x=', '007'],
    ['--x', '-5'],
    ['--x'],
    ['--x', '--', '007'],
    ['--', '--x', '007'],
    ['--x', '1', '--b', '--x', '2'],
    ['--x', '-'],
    ['--xy', '1'],
    ['--long-name', '00', '--long-name=01'],
  ];
  for (const argv of cases) {
    const options = parsed(argv);
    for (const [key, name] of [
      ['x', 'x'],
      ['longName', 'long-name'],
    ] as const) {
      const cacValue = options[key];
      const count = cacValue === undefined || cacValue === true ? 0 : Array.isArray(cacValue) ? cacValue.length : 1;
      assert.is(typedValues(argv, name).length, count, `${JSON.stringify(argv)}: --${name} has ${count} value(s) for cac`);
    }
  }
});

test("asTyped replaces cac's values with the typed text and leaves defaults and bare flags alone", () => {
  const argv = ['--x', '007', '--long-name=0042', '--b'];
  const typed = asTyped(argv, parsed(argv), { x: 'x', longName: 'long-name' });
  assert.is(typed['x'], '007');
  assert.is(typed['longName'], '0042');
  assert.is(typed['b'], true);
  assert.equal(asTyped(['--x', '1', '--x', '02'], parsed(['--x', '1', '--x', '02']), { x: 'x' })['x'], ['1', '02']);
  assert.is(asTyped(['--x'], parsed(['--x']), { x: 'x' })['x'], true, 'a missing value stays visible');
  assert.is(asTyped([], { x: 'default' }, { x: 'x' })['x'], 'default', 'a default is kept');
});

test("usageAsTyped: cac's camelCase key back to the option as typed; other messages unchanged", () => {
  assert.is(usageAsTyped('Unknown option `--keepGoin`', ['run', 'p', '--keep-goin']), 'unknown option --keep-goin');
  assert.is(usageAsTyped('Unknown option `--suchOpt`', ['--no-such-opt']), 'unknown option --no-such-opt');
  assert.is(usageAsTyped('unknown option --deadLine', ['--dead-line=1s', '--', 'x']), 'unknown option --dead-line');
  assert.is(usageAsTyped('Unknown option `--x`', ['--', '--x']), 'unknown option --x');
  assert.is(usageAsTyped('missing required args', ['--a']), 'missing required args');
});

test('dashLedValues: a lone - or a negative-number-like word after an option that takes a value is joined to it; nothing else, nothing after --', () => {
  const cli = cac('t');
  cli.option('-k, --kill-after <d>', '').option('--out [file]', '').option('--json', '').option('--dry-run', '');
  cli.command('c', '').option('--jobs <n>', '');
  const join = (argv: string[]) => dashLedValues(cli as never, argv);
  assert.equal(join(['c', '--jobs', '-1', '--out', '-']), ['c', '--jobs=-1', '--out=-']);
  assert.equal(join(['-k', '-5', '--kill-after', '-.5s']), ['-k=-5', '--kill-after=-.5s']);
  assert.equal(join(['--jobs', '--json', '--json', '-1', '--dry-run', '-']), ['--jobs', '--json', '--json', '-1', '--dry-run', '-']);
  assert.equal(join(['--jobs', '-x', '--jobs', '-']), ['--jobs', '-x', '--jobs=-']);
  assert.equal(join(['--jobs', '2', '--', '--jobs', '-1']), ['--jobs', '2', '--', '--jobs', '-1']);
  assert.equal(join(['--jobs']), ['--jobs']);
  // What mri then makes of the joined words: the values as typed.
  const parsed = cli.parse(['node', 't', ...join(['c', '--jobs', '-1', '-k', '-5', '--out', '-'])], { run: false }).options;
  assert.is(parsed.jobs, -1);
  assert.is(parsed.killAfter, -5);
  assert.is(parsed.out, '-');
});

test.run();
