import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { splitDecode } from '../../src/connectors/inputs/elastic/bulk-body.ts';
import { parseBulk } from '../../src/connectors/inputs/elastic/bulk-parser.ts';
import { DocumentIds } from '../../src/connectors/inputs/elastic/document-ids.ts';
import { EsRequestError } from '../../src/connectors/inputs/elastic/es-error.ts';

function parse(text: string, pathIndex?: string) {
  return parseBulk(text, { pathIndex, ids: new DocumentIds() });
}

const ID = /^[A-Za-z0-9_-]{20}$/;

describe('bulk parser: actions', () => {
  test('index and create: _raw is the document line verbatim, _index and _id from the action', () => {
    const doc1 = '{ "field1" :  "value1", "n": 1.50 }';
    const doc3 = '{"field1":"value3","nested":{"a":[1,2]}}';
    const p = parse(
      `{"index":{"_index":"test","_id":"1"}}\n${doc1}\n{"create":{"_index":"test","_id":"3"}}\n${doc3}\n`,
    );
    assert.deepEqual(p.rows, [
      { _raw: doc1, _index: 'test', _id: '1' },
      { _raw: doc3, _index: 'test', _id: '3' },
    ]);
    assert.deepEqual(
      p.items.map((i) => [i.op, i.index, i.id, i.error]),
      [
        ['index', 'test', '1', undefined],
        ['create', 'test', '3', undefined],
      ],
    );
  });

  test('update: _raw is the update body line verbatim', () => {
    const body = '{ "doc" : {"field2" : "value2"} }';
    const p = parse(`{ "update" : {"_id" : "1", "_index" : "test", "retry_on_conflict": 3} }\n${body}\n`);
    assert.deepEqual(p.rows, [{ _raw: body, _index: 'test', _id: '1' }]);
    assert.equal(p.items[0]!.op, 'update');
  });

  test('update with script and upsert, and doc_as_upsert, are accepted', () => {
    const p = parse(
      '{"update":{"_id":"0","_index":"index1"}}\n' +
        '{"script":{"source":"ctx._source.counter += params.param1","lang":"painless","params":{"param1":1}},"upsert":{"counter":1}}\n' +
        '{"update":{"_id":"2","_index":"index1"}}\n{"doc":{"field":"value"},"doc_as_upsert":true}\n',
    );
    assert.equal(p.rows.length, 2);
    assert.ok(p.items.every((i) => i.error === undefined));
  });

  test('delete: a row with an empty _raw, and no source line is consumed', () => {
    const p = parse('{"delete":{"_index":"test","_id":"2"}}\n{"index":{"_index":"test"}}\n{"a":1}\n');
    assert.deepEqual(p.rows[0], { _raw: '', _index: 'test', _id: '2' });
    assert.equal(p.rows[1]!._raw, '{"a":1}');
    assert.deepEqual(
      p.items.map((i) => i.op),
      ['delete', 'index'],
    );
  });

  test('the four-action example of the Elasticsearch docs', () => {
    const body = [
      '{ "index" : { "_index" : "test", "_id" : "1" } }',
      '{ "field1" : "value1" }',
      '{ "delete" : { "_index" : "test", "_id" : "2" } }',
      '{ "create" : { "_index" : "test", "_id" : "3" } }',
      '{ "field1" : "value3" }',
      '{ "update" : {"_id" : "1", "_index" : "test"} }',
      '{ "doc" : {"field2" : "value2"} }',
      '',
    ].join('\n');
    const p = parse(body);
    assert.deepEqual(
      p.rows.map((r) => [r._raw, r._index, r._id]),
      [
        ['{ "field1" : "value1" }', 'test', '1'],
        ['', 'test', '2'],
        ['{ "field1" : "value3" }', 'test', '3'],
        ['{ "doc" : {"field2" : "value2"} }', 'test', '1'],
      ],
    );
  });

  test('op_type "create" on an index action makes it a create; "index" keeps it', () => {
    const p = parse(
      '{"index":{"_index":"a","op_type":"create"}}\n{"x":1}\n{"index":{"_index":"a","op_type":"index"}}\n{"x":2}\n',
    );
    assert.deepEqual(
      p.items.map((i) => i.op),
      ['create', 'index'],
    );
  });

  test('unknown metadata keys and the legacy _type are ignored', () => {
    const p = parse(
      '{"create":{"_index":"fluent-bit","_type":"_doc","pipeline":"p","routing":"r","require_alias":false,' +
        '"require_data_stream":true,"dynamic_templates":{"a":"b"},"if_seq_no":1,"whatever":[1,2]}}\n{"log":"x"}\n',
    );
    assert.deepEqual(p.rows, [{ _raw: '{"log":"x"}', _index: 'fluent-bit', _id: p.rows[0]!._id }]);
    assert.match(p.rows[0]!._id, ID);
  });

  test('_index falls back to the path index; the action wins over the path', () => {
    const p = parse('{"index":{}}\n{"a":1}\n{"index":{"_index":"other"}}\n{"a":2}\n', 'frompath');
    assert.deepEqual(
      p.rows.map((r) => r._index),
      ['frompath', 'other'],
    );
  });

  test('_id is generated when absent: 20 URL-safe base64 characters, unique', () => {
    const lines: string[] = [];
    for (let i = 0; i < 500; i++) lines.push('{"index":{"_index":"a"}}', `{"i":${i}}`);
    const p = parse(`${lines.join('\n')}\n`);
    const ids = p.rows.map((r) => r._id);
    for (const id of ids) assert.match(id, ID);
    assert.equal(new Set(ids).size, 500);
    assert.ok(p.items.every((i) => i.generated));
  });

  test('numeric _id is taken as text', () => {
    const p = parse('{"index":{"_index":"a","_id":42}}\n{"a":1}\n');
    assert.equal(p.rows[0]!._id, '42');
  });

  test('action lines that differ only by _id are each read right (template fast path)', () => {
    const lines: string[] = [];
    for (let i = 0; i < 5; i++) lines.push(`{"index":{"_index":"a","_id":"doc-${i}"}}`, `{"i":${i}}`);
    lines.push('{"index":{"_index":"a","_id":"with \\"quote"}}', '{"i":5}');
    lines.push('{"index":{"_index":"a","_id":"x","op_type":"create"}}', '{"i":6}');
    lines.push('{"index":{"_index":"b","_id":"doc-7"}}', '{"i":7}');
    const p = parse(`${lines.join('\n')}\n`);
    assert.deepEqual(
      p.rows.map((r) => [r._index, r._id]),
      [
        ['a', 'doc-0'],
        ['a', 'doc-1'],
        ['a', 'doc-2'],
        ['a', 'doc-3'],
        ['a', 'doc-4'],
        ['a', 'with "quote'],
        ['a', 'x'],
        ['b', 'doc-7'],
      ],
    );
    assert.equal(p.items[6]!.op, 'create');
  });
});

describe('bulk parser: framing', () => {
  test('CRLF line ends are trimmed', () => {
    const p = parse(
      '{"index":{"_index":"a","_id":"1"}}\r\n{"a":1}\r\n{"delete":{"_index":"a","_id":"2"}}\r\n',
    );
    assert.deepEqual(
      p.rows.map((r) => r._raw),
      ['{"a":1}', ''],
    );
  });

  test('the last line may lack its newline', () => {
    const p = parse('{"index":{"_index":"a"}}\n{"a":1}');
    assert.equal(p.rows[0]!._raw, '{"a":1}');
    const q = parse('{"delete":{"_index":"a","_id":"1"}}');
    assert.equal(q.rows.length, 1);
  });

  test('blank lines are skipped anywhere', () => {
    const p = parse(
      '\n\n{"index":{"_index":"a"}}\n\n  \t\n{"a":1}\n\r\n\n{"index":{"_index":"a"}}\n{"a":2}\n\n',
    );
    assert.deepEqual(
      p.rows.map((r) => r._raw),
      ['{"a":1}', '{"a":2}'],
    );
  });

  test('a document keeps its own leading and trailing spaces and unicode', () => {
    const doc = '  {"msg":"héllo wörld ✓ 😀"}  ';
    const p = parseBulk(splitDecode(Buffer.from(`{"index":{"_index":"a"}}\n${doc}\n`)), {
      ids: new DocumentIds(),
    });
    assert.equal(p.rows[0]!._raw, doc);
  });

  test('a body decoded in many pieces reads like one string', () => {
    const lines: string[] = [];
    for (let i = 0; i < 3000; i++)
      lines.push('{"index":{"_index":"a"}}', `{"i":${i},"pad":"${'x'.repeat(i % 97)}","u":"é"}`);
    const text = `${lines.join('\r\n')}\r\n`;
    const pieces = splitDecode(Buffer.from(text));
    assert.ok(pieces.length > 3);
    const p = parseBulk(pieces, { ids: new DocumentIds() });
    assert.equal(p.rows.length, 3000);
    assert.deepEqual(
      p.rows.map((r) => r._raw),
      lines.filter((_, i) => i % 2 === 1),
    );
  });
});

describe('bulk parser: item errors (the rest of the request still lands)', () => {
  function errorOf(text: string, at = 0) {
    const p = parse(text);
    return { p, e: p.items[at]!.error };
  }

  test('malformed action JSON fails its item; its source line is skipped', () => {
    const { p, e } = errorOf('{"index":{"_index":"a"\n{"a":1}\n{"index":{"_index":"a"}}\n{"a":2}\n');
    assert.equal(e?.status, 400);
    assert.equal(e?.type, 'x_content_parse_exception');
    assert.match(e!.reason, /Malformed action\/metadata line \[1\]/);
    assert.equal(p.items.length, 2);
    assert.deepEqual(
      p.rows.map((r) => r._raw),
      ['{"a":2}'],
    );
  });

  test('a malformed action followed directly by an action line does not swallow it', () => {
    const { p } = errorOf('not json\n{"index":{"_index":"a"}}\n{"a":2}\n');
    assert.equal(p.items.length, 2);
    assert.equal(p.rows.length, 1);
  });

  test('unknown action', () => {
    const { p, e } = errorOf('{"upsert":{"_index":"a"}}\n{"a":1}\n{"create":{"_index":"a"}}\n{"a":2}\n');
    assert.equal(e?.type, 'illegal_argument_exception');
    assert.match(
      e!.reason,
      /expected field \[create\], \[delete\], \[index\] or \[update\] but found \[upsert\]/,
    );
    assert.equal(p.items[0]!.op, 'index');
    assert.equal(p.rows.length, 1);
  });

  test('an action line that is not an object, has two keys, or no key', () => {
    for (const bad of ['["index"]', '"index"', '{"index":{},"create":{}}', '{}']) {
      const { p, e } = errorOf(`${bad}\n{"index":{"_index":"a"}}\n{"a":1}\n`);
      assert.equal(e?.status, 400, bad);
      assert.match(e!.reason, /Malformed action\/metadata line \[1\]/, bad);
      assert.equal(p.rows.length, 1, bad);
    }
  });

  test('a known action whose metadata is not an object keeps its framing (its source line follows)', () => {
    for (const bad of ['{"index":[]}', '{"index":"a"}']) {
      const { p, e } = errorOf(`${bad}\n{"doc":1}\n{"index":{"_index":"a"}}\n{"a":1}\n`);
      assert.match(e!.reason, /Malformed action\/metadata line \[1\], expected START_OBJECT/, bad);
      assert.equal(p.items.length, 2, bad);
      assert.equal(p.rows.length, 1, bad);
    }
  });

  test('missing source line at the end of the body', () => {
    const { p, e } = errorOf('{"index":{"_index":"a"}}\n{"a":1}\n{"index":{"_index":"a"}}\n', 1);
    assert.equal(e?.type, 'action_request_validation_exception');
    assert.match(e!.reason, /source is missing/);
    assert.equal(p.rows.length, 1);
    const u = errorOf('{"update":{"_index":"a","_id":"1"}}\n').e;
    assert.match(u!.reason, /script or doc is missing/);
  });

  test('a source line that is not a JSON object', () => {
    for (const bad of ['"just a string"', '[1,2]', '42', 'plain text', '{"open":true']) {
      const { p, e } = errorOf(`{"index":{"_index":"a"}}\n${bad}\n{"index":{"_index":"a"}}\n{"a":2}\n`);
      assert.equal(e?.status, 400, bad);
      assert.equal(e?.type, 'document_parsing_exception', bad);
      assert.equal(p.rows.length, 1, bad);
      assert.equal(p.rows[0]!._raw, '{"a":2}');
    }
  });

  test('an update body that is not JSON, not an object, or has neither doc nor script', () => {
    for (const [bad, type] of [
      ['{"doc":', 'x_content_parse_exception'],
      ['[1]', 'x_content_parse_exception'],
      ['{"upsert":{"a":1}}', 'action_request_validation_exception'],
    ] as const) {
      const { e } = errorOf(`{"update":{"_index":"a","_id":"1"}}\n${bad}\n`);
      assert.equal(e?.type, type, bad);
    }
  });

  test('update and delete need an _id; update refuses versioning', () => {
    assert.match(errorOf('{"delete":{"_index":"a"}}\n').e!.reason, /id is missing/);
    assert.match(errorOf('{"update":{"_index":"a"}}\n{"doc":{}}\n').e!.reason, /id is missing/);
    const v = errorOf(
      '{"update":{"_index":"a","_id":"1","version":3}}\n{"doc":{}}\n{"index":{"_index":"a"}}\n{"a":1}\n',
    );
    assert.match(v.e!.reason, /do not support versioning/);
    assert.equal(v.p.rows.length, 1, 'the update body was consumed as its source');
  });

  test('no index in the action nor the path', () => {
    const { e } = errorOf('{"index":{}}\n{"a":1}\n');
    assert.match(e!.reason, /index is missing/);
  });

  test('bad _index / _id values', () => {
    assert.equal(errorOf('{"index":{"_index":""}}\n{"a":1}\n').e?.type, 'invalid_index_name_exception');
    assert.match(errorOf('{"index":{"_index":"a","_id":""}}\n{"a":1}\n').e!.reason, /must not be empty/);
    assert.match(
      errorOf('{"index":{"_index":{"x":1}}}\n{"a":1}\n').e!.reason,
      /expected a simple value for field \[_index\]/,
    );
    assert.match(
      errorOf(`{"index":{"_index":"a","_id":"${'x'.repeat(513)}"}}\n{"a":1}\n`).e!.reason,
      /too long/,
    );
    assert.match(
      errorOf('{"index":{"_index":"a","op_type":"upsert"}}\n{"a":1}\n').e!.reason,
      /opType must be/,
    );
  });

  test('an item error keeps the op, index and id it knew', () => {
    const { p } = errorOf('{"create":{"_index":"a","_id":"7"}}\n[1]\n');
    assert.deepEqual(
      { op: p.items[0]!.op, index: p.items[0]!.index, id: p.items[0]!.id },
      { op: 'create', index: 'a', id: '7' },
    );
  });
});

describe('bulk parser: request-level errors', () => {
  test('an empty body', () => {
    for (const body of ['', '\n\n', '  \r\n']) {
      assert.throws(
        () => parse(body),
        (e: unknown) => e instanceof EsRequestError && e.status === 400 && /no requests added/.test(e.reason),
      );
    }
  });

  test('a body with no readable action line at all', () => {
    for (const body of [
      'this is not ndjson\nat all\n',
      '{"message":"a single json doc"}',
      '[{"index":{}}]\n',
    ]) {
      assert.throws(
        () => parse(body),
        (e: unknown) => e instanceof EsRequestError && e.status === 400 && /Malformed action/.test(e.reason),
        body,
      );
    }
  });
});
