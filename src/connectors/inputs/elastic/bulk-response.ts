import type { BulkOp } from './bulk-action-line.ts';
import type { BulkItem } from './bulk-parser.ts';
import type { SinkFailure } from './bulk-sink.ts';

/**
 * What a written item answers, per op. The store is append-only, so nothing is looked up:
 * index/create -> `created` 201 (version 1); update -> `updated` 200 and delete -> `deleted` 200
 * (version 2, as if the document existed). `_shards` is one copy, written.
 */
const WRITTEN: Record<BulkOp, { before: string; after: string }> = {
  index: written('created', 201, 1),
  create: written('created', 201, 1),
  update: written('updated', 200, 2),
  delete: written('deleted', 200, 2),
};

/** The text of a written item around its `_seq_no`. */
function written(result: string, status: number, version: number): { before: string; after: string } {
  return {
    before: flat(
      `"_version":${version},"result":"${result}","_shards":{"total":1,"successful":1,"failed":0},"_seq_no":`,
    ),
    after: flat(`,"_primary_term":1,"status":${status}}}`),
  };
}

/**
 * A flat copy of an ASCII string. A string built by concatenation is a rope; appending the same
 * rope to the response a thousand times makes V8 walk it a thousand times when the response is
 * flattened into bytes.
 */
function flat(s: string): string {
  return Buffer.from(s, 'latin1').toString('latin1');
}

/** The counter behind `_seq_no`, one per listener (Elasticsearch keeps one per shard). */
export class SequenceNumbers {
  private next = 0;
  take(n: number): number {
    const first = this.next;
    this.next += n;
    return first;
  }
}

export interface BulkOutcome {
  /**
   * The JSON body: `{"took":..,"errors":..,"items":[..]}`, keys in that order, compact, pure ASCII
   * (non-ASCII characters are `\u` escaped). A Buffer built in pieces under V8's large-object
   * size: one 200 KB string per response costs more than building the response.
   */
  body: Buffer;
  /** Items answered with an error (parser errors, plus every row when the sink failed). */
  rejected: number;
  /** Rows written. */
  accepted: number;
  /** The first error, for the input's `last_error`. */
  firstError: string | undefined;
}

/** Characters per piece of the response, well under V8's ~128 KB large-object threshold. */
const PIECE = 32 * 1024;

/**
 * Build the Elasticsearch bulk response for the parsed items. When the sink rejected the write,
 * every item that had a row fails with `sinkFailure`; parser errors keep their own.
 */
export function buildBulkResponse(
  items: readonly BulkItem[],
  tookMs: number,
  seqNos: SequenceNumbers,
  sinkFailure?: SinkFailure,
): BulkOutcome {
  // `{"<op>":{"_index":<index>,"_id":` is the same for runs of items: build it once per pair.
  const heads: Record<BulkOp, Map<string, string>> = {
    index: new Map(),
    create: new Map(),
    update: new Map(),
    delete: new Map(),
  };
  const pieces: Buffer[] = [];
  let out = '';
  let rejected = 0;
  let firstError: string | undefined;
  let seqNo = sinkFailure ? 0 : seqNos.take(items.length);
  const failure = sinkFailure
    ? `"status":${sinkFailure.status},"error":${errorJson(sinkFailure.type, sinkFailure.reason)}}}`
    : '';

  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    const byIndex = heads[item.op];
    let head = byIndex.get(item.index);
    if (head === undefined) {
      head = flat(`{"${item.op}":{"_index":${jsonString(item.index)},"_id":`);
      byIndex.set(item.index, head);
    }
    if (i > 0) out += ',';
    out += head;
    out += item.id === undefined ? 'null,' : item.generated ? `"${item.id}",` : `${jsonString(item.id)},`;
    const error = item.error;
    if (error !== undefined) {
      rejected++;
      firstError ??= `${error.type}: ${error.reason}`;
      out += `"status":${error.status},"error":${errorJson(error.type, error.reason)}}}`;
    } else if (sinkFailure !== undefined) {
      rejected++;
      firstError ??= `${sinkFailure.type}: ${sinkFailure.reason}`;
      out += failure;
    } else {
      const w = WRITTEN[item.op];
      out += w.before;
      out += seqNo++;
      out += w.after;
    }
    if (out.length > PIECE) {
      pieces.push(Buffer.from(out, 'latin1'));
      out = '';
    }
  }
  out += ']}';
  pieces.push(Buffer.from(out, 'latin1'));
  pieces.unshift(
    Buffer.from(`{"took":${Math.max(0, Math.round(tookMs))},"errors":${rejected > 0},"items":[`, 'latin1'),
  );
  return { body: Buffer.concat(pieces), rejected, accepted: items.length - rejected, firstError };
}

function errorJson(type: string, reason: string): string {
  return `{"type":${jsonString(type)},"reason":${jsonString(reason)}}`;
}

/** A JSON string literal in pure ASCII: plain printable ASCII as is, anything else escaped. */
export function jsonString(s: string): string {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return escapedJsonString(s);
  }
  return `"${s}"`;
}

function escapedJsonString(s: string): string {
  return JSON.stringify(s).replace(
    /[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
