import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RequestRateLimit } from '../../src/external/request-rate-limit.ts';
import { ENGINE_UPLOAD_DEFAULTS, uploadLimits, uploadParts } from '../../src/external/s3-upload-limits.ts';

const MiB = 1024 * 1024;

test('up to s3_max_single_part_upload_size an object is one PUT', () => {
  assert.deepEqual(uploadParts(32 * MiB, ENGINE_UPLOAD_DEFAULTS), [{ start: 0, end: 32 * MiB }]);
  assert.deepEqual(uploadParts(0, ENGINE_UPLOAD_DEFAULTS), [{ start: 0, end: 0 }]);
});

test('above it, parts of s3_min_upload_part_size growing by the factor every threshold parts', () => {
  const limits = uploadLimits({
    s3_max_single_part_upload_size: 10,
    s3_min_upload_part_size: 4,
    s3_upload_part_size_multiply_factor: 3,
    s3_upload_part_size_multiply_parts_count_threshold: 2,
  });
  const parts = uploadParts(50, limits);
  assert.deepEqual(
    parts.map((p) => p.end - p.start),
    [4, 4, 12, 12, 18],
  );
  // Contiguous, covering the whole object.
  for (let i = 1; i < parts.length; i++) assert.equal(parts[i]?.start, parts[i - 1]?.end);
  assert.equal(parts.at(-1)?.end, 50);
  // The engine's defaults: 16 MiB parts above 32 MiB.
  assert.deepEqual(
    uploadParts(40 * MiB, ENGINE_UPLOAD_DEFAULTS).map((p) => p.end - p.start),
    [16 * MiB, 16 * MiB, 8 * MiB],
  );
});

test('upload limits: the engine defaults, the given values, and the check after upload', () => {
  assert.deepEqual(uploadLimits({}), ENGINE_UPLOAD_DEFAULTS);
  const l = uploadLimits({
    s3_check_objects_after_upload: true,
    s3_max_put_rps: 5,
    format_csv_delimiter: ';',
  });
  assert.equal(l.checkObjectsAfterUpload, true);
  assert.equal(l.maxPutRps, 5);
  assert.equal(uploadLimits({ s3_check_objects_after_upload: 1 }).checkObjectsAfterUpload, true);
});

test('s3_max_put_rps: the burst goes at once, then one request per 1/rps second', async () => {
  let now = 0;
  const waits: number[] = [];
  const limit = new RequestRateLimit(
    2,
    3,
    () => now,
    async (ms) => {
      waits.push(ms);
      now += ms;
    },
  );
  for (let i = 0; i < 3; i++) assert.equal(await limit.take(), 0);
  assert.equal(await limit.take(), 500);
  assert.equal(await limit.take(), 500);
  now += 10_000; // idle: the bucket refills up to the burst only
  for (let i = 0; i < 3; i++) assert.equal(await limit.take(), 0);
  assert.equal(await limit.take(), 500);
  assert.deepEqual(waits, [500, 500, 500]);
  // A rate of 0 never waits.
  const free = new RequestRateLimit(
    0,
    0,
    () => 0,
    async () => assert.fail('waited'),
  );
  for (let i = 0; i < 100; i++) assert.equal(await free.take(), 0);
});
