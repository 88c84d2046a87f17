/**
 * The README's first example, run as written (issue 14, scope 5): its curl calls are read from
 * README.md (path and body), called in order against a listening server, the backgrounded
 * streaming query first; the rows the README says it prints must arrive.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, test } from 'node:test';
import { ADMIN_PASSWORD, type Harness, startHarness } from '../helpers/harness.ts';
import { readSse, type SseEvent } from '../helpers/sse.ts';

interface CurlCall {
  path: string;
  body: string;
  background: boolean;
}

/** The curl calls of the README's first shell block that talks to `$TP`, shell quoting undone. */
async function readmeCalls(): Promise<{ calls: CurlCall[]; promised: string }> {
  const text = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
  const block = /```sh\n(export TP=[\s\S]*?)```/.exec(text)?.[1];
  assert.ok(block, 'the README has the example block');
  const commands = block.replace(/\\\n\s*/g, ' ').split('\n');
  const calls: CurlCall[] = [];
  for (const command of commands) {
    if (!command.startsWith('curl ')) continue;
    const path = /\$TP(\/\S+)/.exec(command)?.[1];
    const body = /-d '((?:[^']|'\\'')*)'/.exec(command)?.[1]?.replaceAll("'\\''", "'");
    assert.ok(path && body, command);
    calls.push({ path, body, background: command.trimEnd().endsWith('&') });
  }
  const promised = /`data: (\[\[.*?\]\])`/.exec(text.slice(text.indexOf(block)))?.[1];
  assert.ok(promised, 'the README says what the query prints');
  return { calls, promised };
}

let h: Harness;
let base: string;
before(async () => {
  h = await startHarness();
  base = `${await h.trb.listen()}/default/api`;
});
after(() => h.close());

// The timeout is a safety net for a query that would never emit, not a measure.
test("the README's first streaming example shows the rows it promises", { timeout: 120_000 }, async () => {
  const { calls, promised } = await readmeCalls();
  assert.equal(calls.length, 3);
  const headers = {
    authorization: `Basic ${Buffer.from(`admin:${ADMIN_PASSWORD}`).toString('base64')}`,
    'content-type': 'application/json',
  };
  const controller = new AbortController();
  let events: AsyncGenerator<SseEvent> | undefined;
  try {
    for (const call of calls) {
      const r = await fetch(`${base}${call.path}`, {
        method: 'POST',
        headers,
        body: call.body,
        signal: controller.signal,
      });
      if (r.status >= 300) assert.fail(`${call.path}: ${r.status} ${await r.text()}`);
      if (call.background) {
        // `sleep 1` in the README: here, until the query has started (its first event).
        assert.ok(r.body);
        events = readSse(r.body);
        const first = await events.next();
        assert.equal(first.value?.event, 'query');
      }
    }
    assert.ok(events, 'the example runs a streaming query in the background');
    for await (const e of events) {
      if (e.event !== 'message') continue;
      assert.equal(e.data, promised);
      return;
    }
    assert.fail('the streaming query ended without rows');
  } finally {
    controller.abort();
  }
});
