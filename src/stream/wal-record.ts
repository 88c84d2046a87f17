import { crc32 } from 'node:zlib';
import type { PayloadFormat } from './ingest-batch.ts';

/**
 * One WAL record = one committed insert: a sequence range and the exact payload the engine was given.
 *
 * Frame (little endian): magic `TWL1` | header length u32 | payload length u32 | crc32 of header and
 * payload u32 | header (JSON, UTF-8) | payload bytes. A torn or corrupt record (short frame, bad
 * magic, crc mismatch) ends a segment: everything from it on was never acknowledged.
 */
export interface WalRecordHeader {
  /** First `_tp_sn` of the record. */
  first: number;
  /** Number of rows (sequence numbers first .. first + count - 1). */
  count: number;
  /** Commit time, epoch milliseconds (the `_tp_time` of rows that did not give one). */
  time: number;
  format: PayloadFormat;
  /** Column list of a JSONCompactEachRow payload. */
  columns?: readonly string[];
  /** The shard the record's rows went to (streams with several shards, stream-writer.ts); else absent. */
  shard?: number;
  /** Idempotency ids of the requests in this record: [id, first sn, count]. */
  ids?: ReadonlyArray<readonly [string, number, number]>;
  /** Producer tags of the record's writes (producer-marks.ts): the largest per producer, [id, seq, part]. */
  producers?: ReadonlyArray<readonly [string, number, number]>;
}

export interface WalRecord {
  readonly header: WalRecordHeader;
  readonly payload: Buffer;
  /** Byte offset of the frame in its segment, and its total length. */
  readonly offset: number;
  readonly length: number;
}

const MAGIC = 0x314c5754; // 'TWL1' read as little-endian u32
const FRAME = 16;

/** Encode a record as the buffers to write, in order (header frame, then the payload itself). */
export function encodeRecord(header: WalRecordHeader, payload: Buffer): Buffer[] {
  const head = Buffer.from(JSON.stringify(header));
  const frame = Buffer.allocUnsafe(FRAME);
  frame.writeUInt32LE(MAGIC, 0);
  frame.writeUInt32LE(head.length, 4);
  frame.writeUInt32LE(payload.length, 8);
  frame.writeUInt32LE(crc32(payload, crc32(head)), 12);
  return [frame, head, payload];
}

/**
 * Decode the records of a segment's bytes. Stops at the first torn or corrupt record; `validLength`
 * is where the intact records end (the segment is truncated there on recovery).
 */
export function decodeRecords(
  bytes: Buffer,
  withPayload = true,
): { records: WalRecord[]; validLength: number } {
  const records: WalRecord[] = [];
  let at = 0;
  while (at + FRAME <= bytes.length) {
    if (bytes.readUInt32LE(at) !== MAGIC) break;
    const headLen = bytes.readUInt32LE(at + 4);
    const payloadLen = bytes.readUInt32LE(at + 8);
    const end = at + FRAME + headLen + payloadLen;
    if (end > bytes.length) break;
    const head = bytes.subarray(at + FRAME, at + FRAME + headLen);
    const payload = bytes.subarray(at + FRAME + headLen, end);
    if (crc32(payload, crc32(head)) !== bytes.readUInt32LE(at + 12)) break;
    let header: WalRecordHeader;
    try {
      header = JSON.parse(head.toString('utf8')) as WalRecordHeader;
    } catch {
      break;
    }
    records.push({ header, payload: withPayload ? payload : Buffer.alloc(0), offset: at, length: end - at });
    at = end;
  }
  return { records, validLength: at };
}
