import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { DeferredChildLogger } from '../../src/api/request-logger.ts';

function capture(level: string): { logger: FastifyBaseLogger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level }, sink) as unknown as FastifyBaseLogger, lines };
}

test('a request logger makes its child on first use only, and logs with the request bindings', async () => {
  const { logger, lines } = capture('debug');
  let children = 0;
  const counting = Object.create(logger) as FastifyBaseLogger;
  counting.child = (b, o) => {
    children++;
    return logger.child(b, o);
  };
  const log = new DeferredChildLogger(counting, { reqId: 'r-1' }, {});
  assert.equal(log.level, 'debug');
  assert.equal(children, 0);
  log.debug({ code: 7 }, 'refused');
  log.error('failed %s', 'twice');
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(children, 1);
  assert.deepEqual(
    lines.map((l) => [l.reqId, l.code, l.msg, l.level]),
    [
      ['r-1', 7, 'refused', 20],
      ['r-1', undefined, 'failed twice', 50],
    ],
  );
});

test('levels below the logger level write nothing; a level set on the request logger holds', async () => {
  const { logger, lines } = capture('warn');
  const log = new DeferredChildLogger(logger, { reqId: 'r-2' }, {});
  log.info('not written');
  log.debug('not written either');
  assert.equal(log.level, 'warn');
  log.level = 'info';
  log.info('written');
  const child = log.child({ part: 'x' });
  child.warn('from a child');
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(
    lines.map((l) => [l.reqId, l.part, l.msg]),
    [
      ['r-2', undefined, 'written'],
      ['r-2', 'x', 'from a child'],
    ],
  );
});
