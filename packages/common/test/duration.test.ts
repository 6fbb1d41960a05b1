import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { formatDuration, parseDuration } from '../src/index.js';

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

test.run();
