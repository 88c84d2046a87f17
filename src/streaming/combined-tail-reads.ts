/**
 * Distinct tail reads of one stream asked for together run as one engine call (issue 12): a
 * dashboard's panels filter the same stream differently, and each step of each panel costs an
 * engine call whatever it reads (bench/README.md, "latency"), so N panels stepping over a commit
 * cost N calls. Reads asked for within one turn of the event loop (executions woken by the same
 * commit) go out as
 *
 *     SELECT 0 AS q, formatRowNoNewline('JSONCompactEachRow', *) FROM (<read 0>)
 *     UNION ALL SELECT 1, formatRowNoNewline('JSONCompactEachRow', *) FROM (<read 1>) ...
 *
 * and each read gets its branch's rows, in the branch's order, as the same JSONCompactEachRow
 * text its own call answers (formatRow writes a row with the same settings as the output format).
 * When the combined call fails (one read's SQL fails on these rows, or a result shape formatRow
 * cannot take), every read runs alone, so each error stays with the read that caused it.
 */
export class CombinedTailReads {
  private readonly batches = new Map<string, Pending[]>();
  /** Combined engine calls made, and the reads they answered (metrics, tests). */
  calls = 0;
  answered = 0;

  /**
   * The text of `sql` (JSONCompactEachRow lines): `alone` runs it by itself; `together` runs a
   * combined statement (TabSeparatedRaw text). Reads with the same `batch` key (the streams they
   * lock) asked for in one turn of the event loop share one call.
   */
  read(
    batch: string,
    sql: string,
    alone: () => Promise<string>,
    together: (combined: string) => Promise<string>,
  ): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      let pending = this.batches.get(batch);
      if (!pending) {
        pending = [];
        this.batches.set(batch, pending);
        setImmediate(() => {
          this.batches.delete(batch);
          void this.flush(pending!);
        });
      }
      pending.push({ sql, alone, together, resolve, reject });
    });
  }

  private async flush(reads: Pending[]): Promise<void> {
    const first = reads[0];
    if (!first) return;
    if (reads.length === 1) {
      first.alone().then(first.resolve, first.reject);
      return;
    }
    let text: string;
    try {
      text = await first.together(combinedSql(reads.map((r) => r.sql)));
    } catch {
      for (const r of reads) r.alone().then(r.resolve, r.reject);
      return;
    }
    this.calls++;
    this.answered += reads.length;
    const parts: string[][] = reads.map(() => []);
    let at = 0;
    while (at < text.length) {
      let end = text.indexOf('\n', at);
      if (end < 0) end = text.length;
      const tab = text.indexOf('\t', at);
      if (tab > at && tab < end) parts[Number(text.slice(at, tab))]?.push(text.slice(tab + 1, end));
      at = end + 1;
    }
    reads.forEach((r, i) => {
      const rows = parts[i] ?? [];
      r.resolve(rows.length > 0 ? `${rows.join('\n')}\n` : '');
    });
  }
}

/** One statement answering each of `sqls`, every row tagged with the index of its read. */
export function combinedSql(sqls: readonly string[]): string {
  return sqls
    .map((sql, i) => `SELECT ${i} AS __trb_read, formatRowNoNewline('JSONCompactEachRow', *) FROM (${sql})`)
    .join('\nUNION ALL\n');
}

interface Pending {
  sql: string;
  alone: () => Promise<string>;
  together: (combined: string) => Promise<string>;
  resolve: (text: string) => void;
  reject: (e: unknown) => void;
}
