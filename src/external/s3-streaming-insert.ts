import { err } from '../errors/tributary-error.ts';
import type { RowsPlan } from '../queries/execution.ts';
import type { ResultColumn } from '../queries/query-types.ts';
import type { ExecutionProgress, OutputTag, PipelineStep, ResultSink } from '../streaming/result-sink.ts';
import type { S3ViewWriter } from './s3-view-writer.ts';

/**
 * `INSERT INTO <s3 table> SELECT ... FROM <stream>`: the streaming SELECT runs as a query of its
 * own (listed by /v1beta2/queries, ended by cancel) whose rows go to the writer of materialized
 * views INTO s3 tables (S3ViewWriter: buffered until s3_min_upload_file_size bytes or
 * s3_max_upload_idle_seconds, then one new object per batch). The client gets no rows. When the
 * query ends, the rows still buffered become a last object. Like any query (and like Proton's
 * streaming INSERT), it ends with the server; rows a crash left in its spool are uploaded at the
 * next start (uploadLeftoverInsertSpools).
 */
export class S3StreamingInsert implements RowsPlan {
  readonly kind = 'rows';
  readonly streaming = true;
  readonly header: ResultColumn[] = [];
  readonly analysis: RowsPlan['analysis'];

  constructor(
    private readonly select: RowsPlan,
    /** The INSERT's target columns, matched to the SELECT's result columns by position. */
    private readonly columns: readonly string[],
    private readonly writer: S3ViewWriter,
    table: string,
    /** Records the header with the spool before any row is spooled (rows left by a crash are uploaded at start). */
    private readonly remember: (header: readonly ResultColumn[]) => Promise<void> = async () => undefined,
  ) {
    this.analysis = { ...select.analysis, query_type: 'insert' };
    const width = select.header.length;
    if (width !== columns.length) {
      void select.dispose?.();
      throw err('BAD_ARGUMENTS', {
        detail: `INSERT INTO ${table} names ${columns.length} columns but its SELECT has ${width} (${select.header.map((c) => c.name).join(', ')})`,
      });
    }
  }

  async run(_sink: ResultSink, signal: AbortSignal): Promise<void> {
    // The writer finds the table's columns by name: the SELECT's columns take the INSERT's names.
    const header = this.select.header.map((c, i) => ({ ...c, name: this.columns[i] as string }));
    await this.remember(header);
    this.writer.setHeader(header);
    const writer = this.writer;
    const into: ResultSink = {
      rows: (rows: readonly string[], tag?: OutputTag) => writer.rows(rows, tag),
    };
    try {
      await this.select.run(into, signal);
    } finally {
      // Canceled or failed: what is buffered is uploaded, then the buffer goes (kept if that fails).
      await writer.end();
    }
  }

  progress(): ExecutionProgress {
    return this.select.progress();
  }

  pipeline(): PipelineStep[] {
    return this.select.pipeline();
  }

  async dispose(): Promise<void> {
    await this.select.dispose?.();
    await this.writer.end();
  }
}
