import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseQuery, print } from '../../src/sql/index.ts';
import { qualifyReferences, tableReferences } from '../../src/streaming/view-references.ts';

test('tableReferences: FROM items, joins, subqueries, stream table functions; CTEs left out', () => {
  const q = parseQuery(
    `WITH recent AS (SELECT * FROM table(db2.events))
     SELECT * FROM clicks AS c
       JOIN recent ON c.id = recent.id
       LEFT JOIN tumble(table(views_src), 5s) AS w ON c.id = w.id
     WHERE c.k IN (SELECT k FROM dim) AND c.id IN (SELECT id FROM clicks)`,
  );
  assert.deepEqual(tableReferences(q), [
    { database: 'db2', name: 'events' },
    { name: 'clicks' },
    { name: 'views_src' },
    { name: 'dim' },
  ]);
  assert.deepEqual(tableReferences(parseQuery('SELECT * FROM numbers(10)')), []);
  assert.deepEqual(tableReferences(parseQuery('SELECT 1')), []);
  assert.deepEqual(tableReferences(parseQuery('SELECT * FROM dedup(hop(s, 1s, 5s), id)')), [{ name: 's' }]);
});

test('qualifyReferences qualifies every unqualified name it reads, CTEs and qualified names kept', () => {
  const q = parseQuery(
    `WITH r AS (SELECT * FROM a)
     SELECT * FROM r JOIN tumble(table(b), 5s) AS w ON r.x = w.x
     WHERE x IN (SELECT x FROM other.c) AND y IN (SELECT y FROM d)`,
  );
  assert.equal(
    print(qualifyReferences(q, 'vdb'), { pretty: false }),
    'WITH r AS (SELECT * FROM vdb.a) SELECT * FROM r INNER JOIN tumble(table(vdb.b), 5s) AS w ON r.x = w.x WHERE x IN (SELECT x FROM other.c) AND y IN (SELECT y FROM vdb.d)',
  );
  const plain = parseQuery('SELECT * FROM numbers(3)');
  assert.equal(qualifyReferences(plain, 'vdb'), plain, 'nothing to qualify: the same tree');
});
