/** What SHOW INPUTS and the topology show about an input's traffic since it started listening. */
export interface InputStats {
  /** Documents written to the target stream. */
  docs_accepted: number;
  /** Documents answered with an error (bad lines, or rows whose write the sink rejected). */
  docs_rejected: number;
  /** Request body bytes as received on the wire (compressed when the client compressed). */
  bytes_received: number;
  /** HTTP requests of any kind (start-up calls, bulk, rejected ones). */
  requests: number;
  /** Bulk requests among them. */
  bulk_requests: number;
  /** Requests answered with a 4xx/5xx status (401, 413, unframeable bodies, ...). */
  failed_requests: number;
  /** The last error seen (request-level or item-level), or null. */
  last_error: { message: string; at: string } | null;
}

/** The mutable counters behind InputStats. */
export class InputCounters {
  docsAccepted = 0;
  docsRejected = 0;
  bytesReceived = 0;
  requests = 0;
  bulkRequests = 0;
  failedRequests = 0;
  private lastError: { message: string; at: string } | null = null;

  recordError(message: string, at: Date = new Date()): void {
    this.lastError = { message, at: at.toISOString() };
  }

  snapshot(): InputStats {
    return {
      docs_accepted: this.docsAccepted,
      docs_rejected: this.docsRejected,
      bytes_received: this.bytesReceived,
      requests: this.requests,
      bulk_requests: this.bulkRequests,
      failed_requests: this.failedRequests,
      last_error: this.lastError,
    };
  }
}
