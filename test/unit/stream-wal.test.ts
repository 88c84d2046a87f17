import assert from 'node:assert/strict';
import { constants } from 'node:fs';
import { appendFile, mkdtemp, readdir, readFile, readlink, rm, truncate } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { decodeRecords, encodeRecord, type WalRecordHeader } from '../../src/stream/wal-record.ts';
import { WriteAheadLog } from '../../src/stream/write-ahead-log.ts';

const dirs: string[] = [];
after(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'tributary-wal-'));
  dirs.push(d);
  return d;
}

function rec(first: number, count: number, payload = `[${first}]`, ids?: Array<[string, number, number]>) {
  const header: WalRecordHeader = {
    first,
    count,
    time: Date.now(),
    format: 'JSONCompactEachRow',
    columns: ['a'],
    ...(ids ? { ids } : {}),
  };
  return { header, payload: Buffer.from(payload) };
}

test('records round-trip; a torn or corrupted tail ends the decoding', () => {
  const r0 = rec(0, 1);
  const r1 = rec(1, 2);
  const a = Buffer.concat(encodeRecord(r0.header, r0.payload));
  const b = Buffer.concat(encodeRecord(r1.header, Buffer.from('[1],[2]')));
  const both = Buffer.concat([a, b]);
  const { records, validLength } = decodeRecords(both);
  assert.equal(records.length, 2);
  assert.equal(validLength, both.length);
  assert.deepEqual(records[1]?.header, r1.header);
  assert.equal(records[1]?.payload.toString(), '[1],[2]');
  assert.equal(decodeRecords(both.subarray(0, both.length - 1)).records.length, 1);
  const corrupt = Buffer.from(both);
  corrupt.writeUInt8(corrupt.readUInt8(both.length - 2) ^ 0xff, both.length - 2);
  const d = decodeRecords(corrupt);
  assert.equal(d.records.length, 1);
  assert.equal(d.validLength, a.length);
});

test('a log continues after reopening; a torn record at the end is cut off', async () => {
  const dir = await tempDir();
  let wal = await WriteAheadLog.open(dir);
  assert.equal(wal.nextSn, 0);
  await wal.append([rec(0, 1, '[0]', [['id-a', 0, 1]]), rec(1, 3)]);
  await wal.append([rec(4, 1)]);
  assert.equal(wal.nextSn, 5);
  await wal.close();
  const [file] = (await readdir(dir)).filter((f) => f.endsWith('.wal'));
  await appendFile(join(dir, file as string), Buffer.from('TWL1 torn garbage'));
  wal = await WriteAheadLog.open(dir);
  assert.equal(wal.nextSn, 5);
  const records = [];
  for await (const r of wal.recordsFrom(0)) records.push(r.header.first);
  assert.deepEqual(records, [0, 1, 4]);
  assert.deepEqual(wal.summaries()[0]?.ids, [['id-a', 0, 1]]);
  const sizeAfter = (await readFile(join(dir, file as string))).length;
  assert.equal(sizeAfter, wal.bytes);
  await wal.close();
});

test('rollback removes the tail of an append and restores the summary', async () => {
  const dir = await tempDir();
  const wal = await WriteAheadLog.open(dir);
  await wal.append([rec(0, 2)]);
  const bytes = wal.bytes;
  const mark = await wal.append([rec(2, 1, '[2]', [['x', 2, 1]]), rec(3, 1)]);
  await wal.rollback(mark, 1);
  assert.equal(wal.nextSn, 3);
  await wal.rollback(mark, 0);
  assert.equal(wal.nextSn, 2);
  assert.equal(wal.bytes, bytes);
  assert.deepEqual(wal.summaries()[0]?.ids, []);
  await wal.append([rec(2, 5)]);
  const firsts = [];
  for await (const r of wal.recordsFrom(0)) firsts.push([r.header.first, r.header.count]);
  assert.deepEqual(firsts, [
    [0, 2],
    [2, 5],
  ]);
  await wal.close();
});

test('segments rotate by size; sealed ones keep a summary; retention drops the oldest', async () => {
  const dir = await tempDir();
  const wal = await WriteAheadLog.open(dir, { segmentBytes: 100, segmentMaxAgeMs: 60_000 });
  for (let i = 0; i < 6; i++) await wal.append([rec(i, 1, `["${'x'.repeat(60)}"]`, [[`id${i}`, i, 1]])]);
  const sealed = wal.sealedSegments();
  assert.ok(sealed.length >= 2, `sealed ${sealed.length}`);
  const files = await readdir(dir);
  assert.ok(files.some((f) => f.endsWith('.wal.idx')));
  const first = sealed[0];
  const dropped = await wal.dropOldest();
  assert.deepEqual(dropped, first);
  assert.equal(wal.firstSn, first?.next);
  await wal.close();
  // Reopened: sealed segments are read from their summary, the active one is scanned.
  const again = await WriteAheadLog.open(dir, { segmentBytes: 100, segmentMaxAgeMs: 60_000 });
  assert.equal(again.nextSn, 6);
  assert.equal(again.firstSn, first?.next);
  const ids = again.summaries().flatMap((s) => s.ids.map((x) => x[0]));
  assert.ok(!ids.includes('id0') && ids.includes('id5'), ids.join(','));
  await again.close();
});

test('a log whose segments are gone but whose table is ahead continues at the given sequence number', async () => {
  const dir = await tempDir();
  const wal = await WriteAheadLog.open(dir);
  await wal.skipTo(42);
  assert.equal(wal.nextSn, 42);
  await wal.append([rec(42, 1)]);
  assert.equal(wal.nextSn, 43);
  await wal.close();
  const files = (await readdir(dir)).filter((f) => f.endsWith('.wal'));
  assert.deepEqual(files, ['00000000000000000042.wal']);
  await truncate(join(dir, files[0] as string), 0);
  const empty = await WriteAheadLog.open(dir);
  assert.equal(empty.nextSn, 42);
  await empty.close();
});

/** The open flags (octal, /proc/self/fdinfo) of this process's descriptors on `path`. */
async function openFlagsOf(path: string): Promise<number[]> {
  const flags: number[] = [];
  for (const fd of await readdir('/proc/self/fd')) {
    const target = await readlink(`/proc/self/fd/${fd}`).catch(() => '');
    if (target !== path) continue;
    const info = await readFile(`/proc/self/fdinfo/${fd}`, 'utf8').catch(() => '');
    const m = /^flags:\s*([0-7]+)$/m.exec(info);
    if (m) flags.push(Number.parseInt(m[1] as string, 8));
  }
  return flags;
}

test('the active segment is written O_DSYNC: an append is durable when it answers, new or reopened', {
  skip: process.platform !== 'linux' ? '/proc/self/fdinfo is Linux only' : false,
}, async () => {
  const dir = await tempDir();
  const dsync = constants.O_DSYNC;
  let wal = await WriteAheadLog.open(dir);
  await wal.append([rec(0, 1)]);
  const [file] = (await readdir(dir)).filter((f) => f.endsWith('.wal'));
  const path = join(dir, file as string);
  let flags = await openFlagsOf(path);
  assert.ok(flags.length > 0, 'the segment is open');
  assert.ok(
    flags.every((f) => (f & dsync) === dsync),
    `O_DSYNC set: ${flags.map((f) => f.toString(8))}`,
  );
  await wal.close();
  wal = await WriteAheadLog.open(dir);
  await wal.append([rec(1, 1)]);
  flags = await openFlagsOf(path);
  assert.ok(flags.length > 0 && flags.every((f) => (f & dsync) === dsync), 'reopened for appending O_DSYNC');
  await wal.close();
  const { records } = decodeRecords(await readFile(path));
  assert.deepEqual(
    records.map((r) => r.header.first),
    [0, 1],
  );
});
