/**
 * A step's SQL with placeholders the executor fills before each engine call: sequence ranges of
 * sources (`__TRB_LO_0__`), the watermark, the batch number, the emit version, the emit filter.
 * Placeholders are plain tokens that cannot occur in translated SQL.
 */
export class SqlTemplate {
  constructor(readonly text: string) {}

  fill(values: Readonly<Record<string, string | number>>): string {
    return this.text.replace(/__TRB_[A-Z0-9_]+?__/g, (m) => {
      const v = values[m];
      if (v === undefined) throw new Error(`no value for placeholder ${m} in streaming step SQL`);
      return String(v);
    });
  }

  has(placeholder: string): boolean {
    return this.text.includes(placeholder);
  }
}

export const P = {
  watermark: '__TRB_WM__',
  /** The insert a window source's row came in, as an engine expression over `_tp_sn` (1-based). */
  commit: '__TRB_COMMIT__',
  /** The late filter inside a window source's range read (`1` unless a step covers several inserts). */
  late: '__TRB_LATE__',
  batch: '__TRB_BATCH__',
  emitVersion: '__TRB_EMIT_VERSION__',
  /** Rows the query emitted before this step (monotonic() continues from there). */
  emitted: '__TRB_EMITTED__',
  emitFilter: '__TRB_EMIT_FILTER__',
  versionKeys: '__TRB_EV_KEYS__',
  versionBases: '__TRB_EV_BASES__',
  lo: (i: number) => `__TRB_LO_${i}__`,
  hi: (i: number) => `__TRB_HI_${i}__`,
  /** Where the query's first run started reading source `i` (changelog() conversions count from there). */
  start: (i: number) => `__TRB_START_${i}__`,
  /** A kv source read as of this sequence number, all keys (`all` 1) or those changed in (lo, hi]. */
  at: (i: number) => `__TRB_AT_${i}__`,
  all: (i: number) => `__TRB_ALL_${i}__`,
  /** The sign of the rows a kv side of a join of changelog inputs reads in a part (join-side-read.ts). */
  sign: (i: number) => `__TRB_SIGN_${i}__`,
} as const;
