import type { InputCounters } from '../input-counters.ts';
import { decodeBulkBody } from './bulk-body.ts';
import { parseBulk } from './bulk-parser.ts';
import { buildBulkResponse, SequenceNumbers } from './bulk-response.ts';
import { type BulkSink, type SinkFailure, sinkFailure } from './bulk-sink.ts';
import { DocumentIds } from './document-ids.ts';

/**
 * One bulk request, without HTTP: decode the body, frame and read it, write its rows to the sink
 * in one call, and build the Elasticsearch response. Request-level failures are thrown as
 * EsRequestError (413 too large once decompressed, 400 unframeable or undecodable).
 */
export class BulkIngest {
  private readonly ids = new DocumentIds();
  private readonly seqNos = new SequenceNumbers();

  constructor(
    private readonly sink: BulkSink,
    private readonly counters: InputCounters,
    private readonly maxBodyBytes: number,
  ) {}

  /** Returns the JSON body of a 200 response. `startedAt` is `performance.now()` at arrival. */
  async handle(
    body: Buffer,
    contentEncoding: string | undefined,
    pathIndex: string | undefined,
    startedAt: number,
  ): Promise<Buffer> {
    const pieces = await decodeBulkBody(body, contentEncoding, this.maxBodyBytes);
    const parsed = parseBulk(pieces, { pathIndex, ids: this.ids });
    let failure: SinkFailure | undefined;
    if (parsed.rows.length > 0) {
      try {
        await this.sink.write(parsed.rows);
      } catch (e) {
        failure = sinkFailure(e);
      }
    }
    const outcome = buildBulkResponse(parsed.items, performance.now() - startedAt, this.seqNos, failure);
    this.counters.docsAccepted += outcome.accepted;
    this.counters.docsRejected += outcome.rejected;
    if (outcome.firstError !== undefined) this.counters.recordError(outcome.firstError);
    return outcome.body;
  }
}
