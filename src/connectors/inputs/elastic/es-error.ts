/** An Elasticsearch `ErrorCause`: what an item error or a request error carries. */
export interface EsErrorCause {
  type: string;
  reason: string;
}

/** A request-level failure: answered with its HTTP status and an ES-style error body. */
export class EsRequestError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    readonly reason: string,
    /** Extra response headers (`WWW-Authenticate` on a 401, `Allow` on a 405). */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(reason);
    this.name = 'EsRequestError';
  }

  /**
   * The body, as Elasticsearch sends it:
   * `{"error":{"root_cause":[{"type","reason"}],"type","reason"},"status":N}`.
   */
  body(): string {
    const cause = { type: this.type, reason: this.reason };
    return JSON.stringify({ error: { root_cause: [cause], ...cause }, status: this.status });
  }
}
