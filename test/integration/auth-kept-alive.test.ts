/**
 * Authentication on a kept-alive connection: each connection remembers the credentials it last
 * authenticated with (src/api/auth.ts), and a change to users or API keys takes effect on the
 * connection's very next request: a deleted key or a changed password is refused, a demoted user
 * gets 403, a changed header on the same connection is checked as new. Requests go over one raw
 * TCP connection to a listening server, so they share the socket as a real client's do.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { SYSTEM_ACTOR } from '../../src/catalog/audit.ts';
import { authHeader, type Credentials, type Harness, startHarness } from '../helpers/harness.ts';

let h: Harness;
let port: number;

before(async () => {
  h = await startHarness();
  port = Number(new URL(await h.trb.listen()).port);
  const r = await h.call('POST', '/v1beta2/streams', {
    body: { name: 'kept_s', columns: [{ name: 'v', type: 'int32' }] },
  });
  assert.equal(r.statusCode, 201);
});
after(async () => {
  await h.close();
});

/** One keep-alive HTTP/1.1 connection: requests one at a time, answers read by Content-Length. */
class Connection {
  private readonly socket: Socket;
  private buffered = Buffer.alloc(0);
  private waiting: (() => void) | undefined;
  closed = false;

  constructor() {
    this.socket = connect({ host: '127.0.0.1', port });
    this.socket.on('data', (chunk: Buffer) => {
      this.buffered = Buffer.concat([this.buffered, chunk]);
      this.waiting?.();
    });
    this.socket.on('close', () => {
      this.closed = true;
      this.waiting?.();
    });
  }

  async request(
    method: string,
    path: string,
    creds: Credentials | null,
    body?: string,
  ): Promise<{ status: number; body: string }> {
    const headers: Record<string, string> = {
      host: '127.0.0.1',
      connection: 'keep-alive',
      ...(creds ? authHeader(creds) : {}),
      ...(body !== undefined
        ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }
        : {}),
    };
    const head = [
      `${method} /default/api${path} HTTP/1.1`,
      ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    ];
    this.socket.write(`${head.join('\r\n')}\r\n\r\n${body ?? ''}`);
    for (;;) {
      const end = this.buffered.indexOf('\r\n\r\n');
      if (end >= 0) {
        const text = this.buffered.subarray(0, end).toString('latin1');
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(text)?.[1] ?? 0);
        if (this.buffered.length >= end + 4 + length) {
          const answer = {
            status: Number(text.slice(9, 12)),
            body: this.buffered.subarray(end + 4, end + 4 + length).toString('utf8'),
          };
          this.buffered = this.buffered.subarray(end + 4 + length);
          return answer;
        }
      }
      assert.equal(this.closed, false, 'the server closed the kept-alive connection');
      await new Promise<void>((resolve) => {
        this.waiting = resolve;
      });
      this.waiting = undefined;
    }
  }

  close(): void {
    this.socket.destroy();
  }
}

const ingest = (c: Connection, creds: Credentials, v: number) =>
  c.request('POST', '/v1beta2/streams/kept_s/ingest', creds, JSON.stringify({ columns: ['v'], data: [[v]] }));

test('a deleted API key is refused on the connection that used it, through either header', async () => {
  for (const header of ['x-api-key', 'authorization'] as const) {
    const created = await h.call('POST', '/v1beta2/auth/api_keys', { body: { name: `kept-${header}` } });
    assert.equal(created.statusCode, 201);
    const { id, key } = created.json() as { id: string; key: string };
    const creds: Credentials = { apiKey: key, header };
    const c = new Connection();
    try {
      assert.equal((await ingest(c, creds, 1)).status, 200);
      assert.equal((await ingest(c, creds, 2)).status, 200);
      assert.equal((await h.call('DELETE', `/v1beta2/auth/api_keys/${id}`)).statusCode, 204);
      const refused = await ingest(c, creds, 3);
      assert.equal(refused.status, 401);
      assert.equal((JSON.parse(refused.body) as { code: number }).code > 0, true);
      assert.equal(c.closed, false);
    } finally {
      c.close();
    }
  }
});

test('a changed password: the old one is refused on the same connection, the new one admitted', async () => {
  assert.equal(
    (
      await h.call('POST', '/v1beta2/users', {
        body: { username: 'kept_writer', password: 'first-password', role: 'admin' },
      })
    ).statusCode,
    201,
  );
  const c = new Connection();
  try {
    const old: Credentials = { user: 'kept_writer', password: 'first-password' };
    assert.equal((await ingest(c, old, 1)).status, 200);
    assert.equal((await ingest(c, old, 2)).status, 200);
    const r = await h.call('PATCH', '/v1beta2/users/kept_writer', { body: { password: 'second-password' } });
    assert.equal(r.statusCode, 200);
    assert.equal((await ingest(c, old, 3)).status, 401);
    assert.equal((await ingest(c, { user: 'kept_writer', password: 'second-password' }, 4)).status, 200);
  } finally {
    c.close();
  }
});

test('a demoted user gets 403 on the same connection; a deleted user 401', async () => {
  assert.equal(
    (
      await h.call('POST', '/v1beta2/users', {
        body: { username: 'kept_demoted', password: 'demoted-password', role: 'admin' },
      })
    ).statusCode,
    201,
  );
  const creds: Credentials = { user: 'kept_demoted', password: 'demoted-password' };
  const c = new Connection();
  try {
    assert.equal((await ingest(c, creds, 1)).status, 200);
    assert.equal(
      (await h.call('PATCH', '/v1beta2/users/kept_demoted', { body: { role: 'read_only' } })).statusCode,
      200,
    );
    assert.equal((await ingest(c, creds, 2)).status, 403);
    assert.equal((await c.request('GET', '/v1beta2/streams/kept_s', creds)).status, 200);
    assert.equal((await h.call('DELETE', '/v1beta2/users/kept_demoted')).statusCode, 204);
    assert.equal((await c.request('GET', '/v1beta2/streams/kept_s', creds)).status, 401);
  } finally {
    c.close();
  }
});

test('other credentials on the same connection are checked as new: a wrong password after a right one', async () => {
  assert.equal(
    (
      await h.call('POST', '/v1beta2/users', {
        body: { username: 'kept_switch', password: 'switch-password', role: 'admin' },
      })
    ).statusCode,
    201,
  );
  const c = new Connection();
  try {
    assert.equal((await ingest(c, { user: 'kept_switch', password: 'switch-password' }, 1)).status, 200);
    assert.equal((await ingest(c, { user: 'kept_switch', password: 'wrong-password' }, 2)).status, 401);
    assert.equal((await ingest(c, { user: 'admin', password: 'wrong-password' }, 3)).status, 401);
    assert.equal((await c.request('GET', '/v1beta2/streams/kept_s', null)).status, 401);
    assert.equal((await ingest(c, { user: 'kept_switch', password: 'switch-password' }, 4)).status, 200);
  } finally {
    c.close();
  }
});

test('a key deleted through the user store directly (no route) is refused too: the store counts changes', async () => {
  const created = await h.trb.services.users.createApiKey('admin', 'kept-direct', SYSTEM_ACTOR);
  const creds: Credentials = { apiKey: created.key };
  const c = new Connection();
  try {
    assert.equal((await ingest(c, creds, 1)).status, 200);
    assert.equal((await ingest(c, creds, 2)).status, 200);
    assert.equal(await h.trb.services.users.deleteApiKey(created.id), true);
    assert.equal((await ingest(c, creds, 3)).status, 401);
  } finally {
    c.close();
  }
});
