import { ActionLineCache } from './action-line-cache.ts';
import {
  type BulkItemError,
  type BulkOp,
  firstNonBlank,
  isActionLine,
  itemError,
  lastNonBlank,
  tokenName,
  validation,
} from './bulk-action-line.ts';
import type { BulkRow } from './bulk-sink.ts';
import type { DocumentIds } from './document-ids.ts';
import { EsRequestError } from './es-error.ts';

/** One item of the response, in request order: a row to write, or an error. */
export interface BulkItem {
  /** The key of the response item (`index` for lines that are not a readable action). */
  op: BulkOp;
  /** `''` when neither the action nor the path names an index. */
  index: string;
  /** `undefined` (JSON null in the response) when the action failed before an id was known. */
  id: string | undefined;
  /** The id was generated (URL-safe base64: needs no JSON escaping). */
  generated: boolean;
  /** Set when the item failed in the parser; the item then has no row. */
  error?: BulkItemError;
}

/** A parsed bulk body: every item, and the rows of the items without error, in the same order. */
export interface ParsedBulk {
  items: BulkItem[];
  rows: BulkRow[];
}

export interface BulkParseOptions {
  /** The `{index}` of `/{index}/_bulk`, the default for actions without `_index`. */
  pathIndex?: string | undefined;
  ids: DocumentIds;
}

/**
 * Frame and read an NDJSON bulk body (Elasticsearch `_bulk`): action lines, each followed by a
 * source line except `delete`. Lines end in `\n` or `\r\n`; the last may lack its newline; blank
 * lines are skipped. Document lines are never parsed: `_raw` is the line verbatim, checked only to
 * be object-shaped (`{` ... `}`). Bad lines fail their own item; the rest of the request still
 * lands. A body with no readable action line at all is a request-level error (EsRequestError 400).
 */
export function parseBulk(text: string | readonly string[], options: BulkParseOptions): ParsedBulk {
  const lines = new LineReader(typeof text === 'string' ? [text] : text);
  const items: BulkItem[] = [];
  const rows: BulkRow[] = [];
  const pathIndex = options.pathIndex;
  const ids = options.ids;
  ids.refresh();
  let readable = 0;
  let firstError: BulkItemError | undefined;
  const actions = new ActionLineCache();

  for (let line = lines.next(); line !== undefined; line = lines.next()) {
    const lineNo = lines.lineNo;
    const action = actions.read(line, lineNo);
    if (action.op === undefined) {
      firstError ??= action.error;
      items.push({
        op: 'index',
        index: pathIndex ?? '',
        id: undefined,
        generated: false,
        error: action.error,
      });
      // The op is unknown, so is the framing: the next line is this action's source unless it
      // is itself an action line.
      const peek = lines.peek();
      if (peek !== undefined && !isActionLine(peek)) lines.next();
      continue;
    }
    readable++;
    const op = action.op;
    const index = action.index ?? pathIndex;
    const source = op === 'delete' ? '' : lines.next();
    let error = action.error;
    if (error === undefined) {
      if (source === undefined) {
        error = validation(op === 'update' ? 'script or doc is missing' : 'source is missing');
      } else if (index === undefined) {
        error = validation('index is missing');
      } else if (op === 'update') {
        error = checkUpdateBody(source, lines.lineNo);
      } else if (op !== 'delete' && (firstNonBlank(source) !== 123 || lastNonBlank(source) !== 125)) {
        error = itemError(
          400,
          'document_parsing_exception',
          `[${lines.lineNo}:1] failed to parse: the document must be a JSON object, found [${preview(source)}]`,
        );
      }
    }
    if (error !== undefined) {
      firstError ??= error;
      items.push({ op, index: index ?? '', id: action.id, generated: false, error });
      continue;
    }
    const generated = action.id === undefined;
    const id = generated ? ids.next() : action.id!;
    items.push({ op, index: index!, id, generated });
    rows.push({ _raw: source!, _index: index!, _id: id });
  }

  if (items.length === 0)
    throw new EsRequestError(
      400,
      'action_request_validation_exception',
      'Validation Failed: 1: no requests added;',
    );
  if (readable === 0) throw new EsRequestError(400, firstError!.type, firstError!.reason);
  return { items, rows };
}

/** An update body is small and rare: parse it and check it is `{doc|script ...}`. */
function checkUpdateBody(source: string, lineNo: number): BulkItemError | undefined {
  let v: unknown;
  try {
    v = JSON.parse(source);
  } catch (e) {
    return itemError(
      400,
      'x_content_parse_exception',
      `[${lineNo}:1] failed to parse update body: ${(e as Error).message}`,
    );
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    return itemError(
      400,
      'x_content_parse_exception',
      `[${lineNo}:1] update body must be a JSON object, found [${tokenName(v)}]`,
    );
  const body = v as Record<string, unknown>;
  if (body.doc === undefined && body.script === undefined) return validation('script or doc is missing');
  return undefined;
}

function preview(s: string): string {
  return s.length > 40 ? `${s.slice(0, 40)}...` : s;
}

/**
 * Lines of a body given in pieces that end at a newline (or the body's end): `\n` or `\r\n`
 * terminated, the last maybe not; blank lines skipped.
 */
class LineReader {
  /** 1-based physical line number of the line last returned. */
  lineNo = 0;
  private piece = 0;
  private pos = 0;
  private peeked: string | undefined;
  private peekedNo = 0;

  constructor(private readonly pieces: readonly string[]) {}

  next(): string | undefined {
    if (this.peeked !== undefined) {
      const line = this.peeked;
      this.peeked = undefined;
      this.lineNo = this.peekedNo;
      return line;
    }
    while (this.piece < this.pieces.length) {
      const text = this.pieces[this.piece]!;
      const n = text.length;
      let pos = this.pos;
      while (pos < n) {
        const nl = text.indexOf('\n', pos);
        const next = nl < 0 ? n : nl + 1;
        let end = nl < 0 ? n : nl;
        this.lineNo++;
        if (end > pos && text.charCodeAt(end - 1) === 13) end--;
        const c = text.charCodeAt(pos);
        if (end === pos || ((c === 32 || c === 9 || c === 13) && isBlank(text, pos, end))) {
          pos = next;
          continue;
        }
        this.pos = next;
        return text.slice(pos, end);
      }
      this.piece++;
      this.pos = 0;
    }
    return undefined;
  }

  peek(): string | undefined {
    if (this.peeked !== undefined) return this.peeked;
    const lineNo = this.lineNo;
    const line = this.next();
    this.peekedNo = this.lineNo;
    this.lineNo = lineNo;
    this.peeked = line;
    return line;
  }
}

function isBlank(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c !== 32 && c !== 9 && c !== 13) return false;
  }
  return true;
}
