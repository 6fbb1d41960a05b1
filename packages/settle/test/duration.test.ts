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

test('parseDuration refuses bare numbers, negatives and unknown units', () => {
  for (const bad of ['10', '-1s', '5 min', '', 's', '1d', '1e3s']) assert.is(parseDuration(bad), undefined, bad);
});

test('formatDuration round-trips', () => {
  for (const ms of [500, 30_000, 600_000, 7_200_000, 1500]) assert.is(parseDuration(formatDuration(ms)), ms);
});

test.run();
