import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  applyAlteration,
  type ColumnAlteration,
  columnMapping,
  historyEntry,
  pruneHistory,
  schemaAt,
  usersOf,
} from '../../src/stream/alter-columns.ts';
import { CommittedRangeNotifier } from '../../src/stream/committed-range-notifier.ts';
import { defineStream, identityTranslate } from '../../src/stream/define-stream.ts';
import { IngestGate } from '../../src/stream/ingest-gate.ts';
import { referencedNames } from '../../src/stream/sql-text.ts';
import type { ColumnHistoryEntry, StreamDefinition } from '../../src/stream/stream-definition.ts';

function alter(def: StreamDefinition, list: ColumnAlteration[], sn: number): StreamDefinition {
  const history: ColumnHistoryEntry[] = [...(def.columnHistory ?? [])];
  let d = def;
  for (const a of list) {
    const r = applyAlteration(d, a, identityTranslate);
    if (r.change) {
      const e = historyEntry(d, r.change, sn);
      if (e) history.push(e);
    }
    d = r.def;
  }
  return { ...d, columnHistory: history };
}

const base = defineStream({
  name: 's',
  columns: [
    { name: 'a', type: 'int32' },
    { name: 'b', type: 'string' },
    { name: 'c', type: 'string' },
  ],
});

test('referencedNames finds column references, not functions, literals or numbers', () => {
  assert.deepEqual([...referencedNames('toStartOfHour(`my col`) + x * 2 - length(\'a b\') + "q"')].sort(), [
    'my col',
    'q',
    'x',
  ]);
});

test('schemaAt rebuilds the columns an old record was written with, through drop/rename/add/modify', () => {
  let def = alter(
    base,
    [
      { kind: 'drop', name: 'b' },
      { kind: 'rename', from: 'c', to: 'c2' },
    ],
    10,
  );
  def = alter(def, [{ kind: 'add', column: { name: 'b', type: 'int64' } }], 20);
  def = alter(def, [{ kind: 'modify', column: { name: 'a', type: 'int64' } }], 30);
  // A record from before everything: a int32, b string, c string.
  const old = schemaAt(def, 5);
  assert.ok(old);
  assert.deepEqual(
    old.columns.map((c) => `${c.name} ${c.engineType}`).sort(),
    ["_tp_time DateTime64(3, 'UTC')", 'a Int32', 'b String', 'c String'].sort(),
  );
  // The new `b` does not come from the old `b` (dropped before it was added).
  assert.deepEqual([...old.origin].sort(), [
    ['_tp_time', '_tp_time'],
    ['a', 'a'],
    ['c2', 'c'],
  ]);
  assert.deepEqual(columnMapping(def, old), {
    names: ['`a`', '`c2`', '`_tp_time`', '`_tp_sn`'],
    exprs: ['CAST(`a` AS Int64)', '`c`', '`_tp_time`', '`_tp_sn`'],
  });
  // Between the add and the modify: only the type of a differs.
  const mid = schemaAt(def, 25);
  assert.ok(mid);
  assert.equal(mid.origin.get('b'), 'b');
  assert.equal(mid.columns.find((c) => c.name === 'a')?.engineType, 'Int32');
  assert.equal(schemaAt(def, 30), undefined);
  assert.deepEqual(
    pruneHistory(def.columnHistory, 20).map((h) => h.sn),
    [30],
  );
});

test('usersOf names what uses a column', () => {
  const def = defineStream({
    name: 'k',
    columns: [
      { name: 'id', type: 'int32' },
      { name: 'v', type: 'int32' },
      { name: 'w', type: 'int32', default: 'v + 1' },
    ],
    primaryKey: 'id',
    mode: 'versioned_kv',
  });
  assert.deepEqual(usersOf(def, 'id'), ['the PRIMARY KEY', 'ORDER BY']);
  assert.deepEqual(usersOf(def, 'v'), ['the expression of column w']);
  assert.deepEqual(usersOf(def, 'w'), []);
});

test('the notifier moves listeners on rename and still unsubscribes them', () => {
  const n = new CommittedRangeNotifier();
  const got: number[] = [];
  const stop = n.subscribe('d.a', (r) => got.push(r.toSn));
  n.rename('d.a', 'd.b');
  n.publish('d.a', { fromSn: 0, toSn: 0 });
  n.publish('d.b', { fromSn: 1, toSn: 1 });
  stop();
  n.publish('d.b', { fromSn: 2, toSn: 2 });
  assert.deepEqual(got, [1]);
});

test('the ingest gate waits for requests inside and holds new ones until opened', async () => {
  const gate = new IngestGate();
  await gate.enter();
  let closed = false;
  const closing = gate.close().then(() => {
    closed = true;
  });
  await new Promise((r) => setImmediate(r));
  assert.equal(closed, false);
  let entered = false;
  const later = gate.enter().then(() => {
    entered = true;
  });
  gate.leave();
  await closing;
  assert.equal(entered, false);
  gate.open();
  await later;
  assert.equal(entered, true);
  gate.leave();
  assert.equal(gate.active, 0);
});

test('tryEnter enters an open gate at once and refuses a closed one, which close then waits for', async () => {
  const gate = new IngestGate();
  assert.equal(gate.tryEnter(), true);
  assert.equal(gate.active, 1);
  let closed = false;
  const closing = gate.close().then(() => {
    closed = true;
  });
  await new Promise((r) => setImmediate(r));
  // close waits for the request that entered with tryEnter, and holds new ones back meanwhile.
  assert.equal(closed, false);
  assert.equal(gate.tryEnter(), false);
  assert.equal(gate.active, 1);
  gate.leave();
  await closing;
  assert.equal(gate.tryEnter(), false);
  gate.open();
  assert.equal(gate.tryEnter(), true);
  gate.leave();
  assert.equal(gate.active, 0);
});
