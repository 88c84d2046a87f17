// The conformance runner maps the case query ids that RECOVER FROM / UNSUBSCRIBE TO name to the
// server's ids (the server assigns its own), and leaves other SQL and unknown ids alone.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { withServerQueryId } from '../../scripts/conformance/statement-runner.ts';

const ids: Record<string, string> = { '1901': 'b7c4-uuid' };
const serverIdOf = (id: string) => ids[id];

test('RECOVER FROM and UNSUBSCRIBE TO name the server id of the case query', () => {
  assert.equal(withServerQueryId("recover from '1901'", serverIdOf), "recover from 'b7c4-uuid'");
  assert.equal(withServerQueryId("UNSUBSCRIBE TO '1901';", serverIdOf), "UNSUBSCRIBE TO 'b7c4-uuid';");
});

test('an id that never ran and other statements are unchanged', () => {
  assert.equal(withServerQueryId("recover from '19000'", serverIdOf), "recover from '19000'");
  assert.equal(withServerQueryId("select '1901'", serverIdOf), "select '1901'");
});
