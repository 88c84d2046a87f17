import assert from 'node:assert/strict';
import type { Harness } from './harness.ts';

/** SQL through the API for tests: statements, expected failures, historical rows, polling. */
export class SqlCalls {
  constructor(private readonly harness: () => Harness) {}

  async run(text: string): Promise<{ status: number; body: string }> {
    const r = await this.harness().call('POST', '/v1beta2/queries', { body: { sql: text } });
    return { status: r.statusCode, body: r.body };
  }

  async ok(text: string): Promise<void> {
    const r = await this.run(text);
    assert.ok(r.status === 204 || r.status === 200, `${text}: ${r.status} ${r.body}`);
  }

  async fails(text: string, status: number, code: number, message?: RegExp): Promise<void> {
    const r = await this.run(text);
    assert.equal(r.status, status, `${text}: ${r.body}`);
    const body = JSON.parse(r.body) as { code: number; message: string };
    assert.equal(body.code, code, `${text}: ${r.body}`);
    if (message) assert.match(body.message, message);
  }

  /** Rows of a historical query (POST /exec, type historical). */
  async rows(text: string): Promise<unknown[][]> {
    const r = await this.harness().call('POST', '/v1beta2/exec', { body: { sql: text, type: 'historical' } });
    assert.equal(r.statusCode, 200, `${text}: ${r.body}`);
    return (r.json() as { data: unknown[][] }).data;
  }

  async ingest(stream: string, columns: string[], data: unknown[][]): Promise<void> {
    const r = await this.harness().call('POST', `/v1beta2/streams/${stream}/ingest`, {
      body: { columns, data },
    });
    assert.equal(r.statusCode, 200, r.body);
  }
}

/** Poll `check` until it answers true; fails with `what` after `ms` (a deadline, not a measurement). */
export async function eventually(what: string, check: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const until = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      if (await check()) return;
    } catch (e) {
      last = e;
    }
    if (Date.now() > until)
      assert.fail(`${what} did not happen within ${ms} ms${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
