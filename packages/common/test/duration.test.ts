import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { formatDuration, maxDurationMs, parseCommandLineDuration, parseDuration } from '../src/index.js';

test('parseDuration accepts ms, s, m, h', () => {
  assert.is(parseDuration('500ms'), 500);
  assert.is(parseDuration('30s'), 30_000);
  assert.is(parseDuration('10m'), 600_000);
  assert.is(parseDuration('2h'), 7_200_000);
  assert.is(parseDuration('1.5s'), 1500);
});

test('parseDuration reads a bare 0 as zero (none, where a deadline takes it)', () => {
  assert.is(parseDuration('0'), 0);
  assert.is(parseDuration('0s'), 0);
});

test('parseDuration rounds a positive duration under 1 ms up to 1 ms, never down to 0', () => {
  assert.is(parseDuration('0.1ms'), 1);
  assert.is(parseDuration('0.4ms'), 1);
  assert.is(parseDuration('0.0001s'), 1);
  assert.is(parseDuration('0.0ms'), 0);
});

test('parseDuration accepts any length, past setTimeout’s 24.8 days', () => {
  assert.is(parseDuration('600h'), 2_160_000_000);
  assert.is(parseDuration('100000h'), 360_000_000_000);
});

test('parseDuration refuses bare numbers, negatives and unknown units', () => {
  for (const bad of ['10', '00', '0.0', '-0', '-1s', '5 min', '', 's', '1d', '1e3s']) assert.is(parseDuration(bad), undefined, bad);
});

test('formatDuration round-trips', () => {
  for (const ms of [500, 30_000, 600_000, 7_200_000, 1500]) assert.is(parseDuration(formatDuration(ms)), ms);
});

test('parseCommandLineDuration reads GNU timeout’s forms: a bare number is seconds, and d is days', () => {
  assert.is(parseCommandLineDuration('10'), 10_000);
  assert.is(parseCommandLineDuration('10.34'), 10_340);
  assert.is(parseCommandLineDuration('9.999999999'), 10_000);
  assert.is(parseCommandLineDuration('.5'), 500);
  assert.is(parseCommandLineDuration('2d'), 172_800_000);
  assert.is(parseCommandLineDuration('1e3s'), 1_000_000);
  assert.is(parseCommandLineDuration('2.34e+5d'), 234_000 * 86_400_000);
  assert.is(parseCommandLineDuration('0'), 0);
  assert.is(parseCommandLineDuration('0.0'), 0);
  assert.is(parseCommandLineDuration('500ms'), 500);
});

test('parseCommandLineDuration saturates what is too large to count and rounds underflow up', () => {
  assert.is(parseCommandLineDuration('4294967296'), 4_294_967_296_000);
  assert.is(parseCommandLineDuration('9223372036854775808d'), maxDurationMs);
  assert.is(parseCommandLineDuration(`1${'0'.repeat(4932)}`), maxDurationMs);
  assert.is(parseCommandLineDuration('1e-5000'), 1);
  assert.is(parseCommandLineDuration('0.0000001'), 1);
});

test('parseCommandLineDuration refuses what GNU refuses', () => {
  for (const bad of ['invalid', '42D', '-1', '-1e4932', '1x', '', 'd', 'NaN', 'Infinity', '1 s']) {
    assert.is(parseCommandLineDuration(bad), undefined, bad);
  }
});

test.run();
