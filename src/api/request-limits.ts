import { maxHeaderSize } from 'node:http';

/**
 * The sizes a request may have (docs/api.md "Limits"). Each is answered with its own 4xx
 * `{code, message, system}` naming the limit: BODY_TOO_LARGE (413), DECODED_BODY_TOO_LARGE (413),
 * HEADERS_TOO_LARGE (431), URL_TOO_LONG (414).
 */

/** Largest request body as sent (ingest batches included), in bytes. */
export const BODY_LIMIT = 256 * 1024 * 1024;

/** Largest ingest body after `Content-Encoding: gzip`/`deflate` is undone, in bytes. */
export const DECODED_BODY_LIMIT = 256 * 1024 * 1024;

/**
 * Largest request line plus headers, in bytes: Node's HTTP parser limit (16 KiB unless the process
 * runs with `--max-http-header-size`). The URL counts towards it.
 */
export const HEADER_LIMIT = maxHeaderSize;

/** Longest single path segment (a stream, view or query name in the URL), in characters. */
export const PATH_SEGMENT_LIMIT = 1024;
