// RunningInputs: the runtime that starts and stops elastic listeners from definitions, as CREATE
// INPUT, DROP INPUT, SHOW INPUTS and a restart use it.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { test } from 'node:test';
import type { BulkRow, BulkSink } from '../../src/connectors/inputs/elastic/bulk-sink.ts';
import { validateInputSettings } from '../../src/connectors/inputs/input-definition.ts';
import { RunningInputs } from '../../src/connectors/inputs/running-inputs.ts';
import { isTributaryError } from '../../src/errors/tributary-error.ts';

const named = (name: string) => (e: unknown) => isTributaryError(e) && e.errorName === name;

class MemorySink implements BulkSink {
  rows: BulkRow[] = [];
  async write(rows: BulkRow[]): Promise<void> {
    this.rows.push(...rows);
  }
}

function definition(name: string, port: number, extra: Record<string, string> = {}) {
  return validateInputSettings(
    name,
    { type: 'elastic', target_stream: `${name}_stream`, tcp_port: port, listen_host: '127.0.0.1', ...extra },
    `input ${name}`,
  );
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

test('start, list with counters, stop', async () => {
  const inputs = new RunningInputs();
  const sink = new MemorySink();
  try {
    const status = await inputs.start(definition('a_in', 0), sink);
    assert.equal(status.status, 'running');
    assert.ok(status.bound_port! > 0);
    assert.equal(status.tcp_port, 0);
    assert.equal(status.target_stream, 'a_in_stream');
    assert.equal(status.comment, 'input a_in');
    const body = '{"index":{"_index":"x"}}\n{"a":1}\n{"index":{"_index":"x"}}\n[]\n';
    const res = await fetch(`http://127.0.0.1:${status.bound_port}/_bulk`, { method: 'POST', body });
    assert.equal(res.status, 200);
    await res.text();
    const [listed] = inputs.list();
    assert.equal(listed!.name, 'a_in');
    assert.deepEqual(
      {
        docs_accepted: listed!.stats.docs_accepted,
        docs_rejected: listed!.stats.docs_rejected,
        bytes_received: listed!.stats.bytes_received,
        requests: listed!.stats.requests,
        bulk_requests: listed!.stats.bulk_requests,
      },
      { docs_accepted: 1, docs_rejected: 1, bytes_received: body.length, requests: 1, bulk_requests: 1 },
    );
    assert.ok(listed!.stats.last_error);
    assert.equal(sink.rows.length, 1);
    await inputs.stop('a_in');
    assert.equal(inputs.has('a_in'), false);
    await assert.rejects(fetch(`http://127.0.0.1:${status.bound_port}/`));
    await assert.rejects(inputs.stop('a_in'), named('RESOURCE_NOT_FOUND'));
  } finally {
    await inputs.stopAll();
  }
});

test('a port in use fails the start and leaves no entry; a duplicate name is refused', async () => {
  const inputs = new RunningInputs();
  try {
    const first = await inputs.start(definition('first', 0), new MemorySink());
    await assert.rejects(
      inputs.start(definition('second', first.bound_port!), new MemorySink()),
      (e: unknown) => {
        assert.ok(isTributaryError(e));
        assert.equal(e.errorName, 'INPUT_PORT_IN_USE');
        return true;
      },
    );
    assert.equal(inputs.has('second'), false);
    assert.deepEqual(
      inputs.list().map((s) => s.name),
      ['first'],
    );
    await assert.rejects(
      inputs.start(definition('first', 0), new MemorySink()),
      named('RESOURCE_ALREADY_EXISTS'),
    );
  } finally {
    await inputs.stopAll();
  }
});

test('restore after a restart: inputs listen again on their ports; one that cannot is kept as failed', async () => {
  const port = await freePort();
  const sinks = new Map<string, MemorySink>();
  const sinkFor = (d: { name: string }) => {
    const s = new MemorySink();
    sinks.set(d.name, s);
    return s;
  };
  const defs = [definition('logs_in', port, { username: 'u', password: 'p' }), definition('blocked', port)];

  const before = new RunningInputs();
  await before.start(defs[0]!, sinkFor(defs[0]!));
  await before.stopAll();

  const after = new RunningInputs();
  try {
    const statuses = await after.restore(defs, sinkFor);
    assert.deepEqual(
      statuses.map((s) => [s.name, s.status, s.bound_port]),
      [
        ['logs_in', 'running', port],
        ['blocked', 'failed', null],
      ],
    );
    assert.match(
      after.status('blocked')!.stats.last_error!.message,
      /Cannot listen on 127\.0\.0\.1:\d+: the address is already in use/,
    );
    const res = await fetch(`http://127.0.0.1:${port}/_bulk`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from('u:p').toString('base64')}` },
      body: '{"create":{"_index":"after-restart"}}\n{"a":1}\n',
    });
    assert.equal(res.status, 200);
    await res.text();
    assert.equal(sinks.get('logs_in')!.rows[0]!._index, 'after-restart');
    await after.stop('blocked');
    assert.deepEqual(
      after.list().map((s) => s.name),
      ['logs_in'],
    );
  } finally {
    await after.stopAll();
  }
});

test('stop returns while a keep-alive client holds an idle connection', async () => {
  const inputs = new RunningInputs();
  const status = await inputs.start(definition('ka', 0), new MemorySink());
  const res = await fetch(`http://127.0.0.1:${status.bound_port}/`, {
    headers: { connection: 'keep-alive' },
  });
  await res.text();
  await inputs.stop('ka');
  assert.equal(inputs.list().length, 0);
});
