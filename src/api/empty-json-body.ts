import type { FastifyInstance } from 'fastify';

/**
 * Parse JSON bodies as Fastify does, except that an empty body is no body: clients send
 * `Content-Type: application/json` on every call, DELETE and cancel included. A route that
 * needs a body still refuses the missing one through its schema.
 */
export function installEmptyJsonBody(app: FastifyInstance): void {
  const json = app.getDefaultJsonParser('error', 'ignore');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if ((body as string).trim() === '') {
      done(null, undefined);
      return;
    }
    json(request, body as string, done);
  });
}
