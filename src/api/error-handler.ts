import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { err, TributaryError, toTributaryError } from '../errors/tributary-error.ts';
import { allowedMethods } from './method-not-allowed.ts';
import { BODY_LIMIT, HEADER_LIMIT, PATH_SEGMENT_LIMIT } from './request-limits.ts';

interface ValidationItem {
  instancePath?: string;
  message?: string;
  keyword?: string;
  params?: Record<string, unknown>;
}

/** Name the field an ajv validation failure is about, as a dotted path. */
function fieldOf(item: ValidationItem, context: string | undefined): string {
  const path = (item.instancePath ?? '').split('/').filter(Boolean).join('.');
  const extra =
    (item.params?.missingProperty as string | undefined) ??
    (item.params?.additionalProperty as string | undefined);
  const field = [path, extra].filter(Boolean).join('.');
  if (field) return field;
  return context === 'body' ? 'body' : (context ?? 'request');
}

function detailOf(item: ValidationItem): string {
  if (item.keyword === 'additionalProperties') return 'is not a known field';
  if (item.keyword === 'required') return 'is required';
  if (item.keyword === 'enum')
    return `must be one of ${(item.params?.allowedValues as unknown[] | undefined)?.join(', ')}`;
  return item.message ?? 'is invalid';
}

/** Map anything a route throws to the `{code, message, system}` body with the right status. */
export function toApiError(error: unknown, bodyLimit?: number): TributaryError {
  if (error instanceof TributaryError) return error;
  const fe = error as FastifyError & { validation?: ValidationItem[]; validationContext?: string };
  if (fe.validation && fe.validation.length > 0) {
    const item = fe.validation[0] as ValidationItem;
    return err('INVALID_FIELD', { field: fieldOf(item, fe.validationContext), detail: detailOf(item) });
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return err('BODY_TOO_LARGE', { limit: (fe as { limit?: number }).limit ?? bodyLimit ?? BODY_LIMIT });
    case 'FST_ERR_BAD_URL':
      return err('INVALID_REQUEST', { detail: `the URL is not valid (${fe.message})` });
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return err('URL_TOO_LONG', {
        detail: `a path segment is longer than the limit of ${PATH_SEGMENT_LIMIT} characters`,
      });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return err('UNSUPPORTED_MEDIA_TYPE', { type: fe.message.replace(/^Unsupported Media Type:\s*/, '') });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return err('INVALID_REQUEST', { detail: 'the body is empty but Content-Type is application/json' });
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return err('INVALID_REQUEST', { detail: `the body is not valid JSON (${fe.message})` });
  }
  if (fe instanceof SyntaxError || fe.statusCode === 400) {
    return err('INVALID_REQUEST', { detail: `the body is not valid JSON (${fe.message})` });
  }
  return toTributaryError(error);
}

/**
 * Errors answer `{code, message, system}` and are logged with the request's id (`reqId`, also in
 * the `x-request-id` header of the answer): server errors at error, refusals at debug.
 */
export function installErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const e = toApiError(error, request.routeOptions.bodyLimit);
    if (e.status >= 500) request.log.error({ err: error, code: e.code }, e.message);
    else request.log.debug({ code: e.code, status: e.status }, e.message);
    if (reply.sent || reply.raw.headersSent) return;
    if (e.status === 401) reply.header('WWW-Authenticate', 'Basic realm="tributary", charset="UTF-8"');
    void reply.status(e.status).type('application/json').send(e.toBody());
  });
  const methodsOf = allowedMethods(app);
  app.setNotFoundHandler((request, reply) => {
    const url = request.url.split('?')[0] ?? '';
    const methods = methodsOf(url);
    // A method the path has but that did not match (an odd spelling of the path) is a 404.
    const allow = methods.includes(request.method) ? [] : methods;
    const e =
      allow.length > 0
        ? err('METHOD_NOT_ALLOWED', { method: request.method, url, allow: allow.join(', ') })
        : err('ROUTE_NOT_FOUND', { method: request.method, url });
    if (allow.length > 0) reply.header('Allow', allow.join(', '));
    request.log.debug({ code: e.code, status: e.status }, e.message);
    void reply.status(e.status).send(e.toBody());
  });
}

function sendError(reply: FastifyReply, e: TributaryError): void {
  void reply.status(e.status).type('application/json').send(e.toBody());
}

/**
 * Fastify's `frameworkErrors`: errors found while routing, before any handler or hook runs (a URL
 * that does not decode, a path segment over PATH_SEGMENT_LIMIT).
 */
export function frameworkErrorHandler(
  error: FastifyError,
  _request: FastifyRequest,
  reply: FastifyReply,
): void {
  sendError(reply, toApiError(error));
}

/** The catalogue error for an error of Node's HTTP parser (the `clientError` event). */
export function httpClientError(error: Error & { code?: string; rawPacket?: unknown }): TributaryError {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW': {
      // A packet that starts with the request line and holds no line end within the limit: the
      // request line (the URL) alone is too long.
      const packet = Buffer.isBuffer(error.rawPacket) ? error.rawPacket : undefined;
      const head = packet?.toString('latin1', 0, Math.min(packet.length, 16)) ?? '';
      const lineEnd = packet?.indexOf(0x0a) ?? -1;
      const requestLine = /^[A-Z]+ \S/.test(head) && (lineEnd === -1 || lineEnd > HEADER_LIMIT);
      return requestLine
        ? err('URL_TOO_LONG', {
            detail: `the request line is longer than the limit of ${HEADER_LIMIT} bytes`,
          })
        : err('HEADERS_TOO_LARGE', { limit: HEADER_LIMIT });
    }
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return err('REQUEST_TIMEOUT');
    default:
      return err('INVALID_REQUEST', {
        detail: `the HTTP request is malformed (${error.code ?? 'parse error'}: ${error.message})`,
      });
  }
}

const answered = new WeakSet<Duplex>();

/**
 * Fastify's `clientErrorHandler` (Node's `clientError` event): a request Node's HTTP parser refused
 * (headers over HEADER_LIMIT, a URL that long, bytes that are no HTTP) never reaches a route, so the
 * answer is written on the socket here, as `{code, message, system}` JSON. What the client still
 * sends is read and dropped so it sees the answer rather than a reset; the socket closes after it.
 */
export function httpClientErrorHandler(
  this: FastifyInstance,
  error: Error & { code?: string; rawPacket?: unknown },
  socket: Duplex,
): void {
  if (error.code === 'ECONNRESET' || socket.destroyed || answered.has(socket)) return;
  answered.add(socket);
  const e = httpClientError(error);
  this.log.debug({ err: error, code: e.code }, 'HTTP client error');
  if (socket.writable) {
    const body = JSON.stringify(e.toBody());
    socket.end(
      `HTTP/1.1 ${e.status} ${STATUS_CODES[e.status] ?? 'Error'}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.resume();
  setTimeout(() => socket.destroy(), 2000).unref();
}
