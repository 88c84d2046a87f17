/**
 * A streaming query joining a stream with an s3 external table: the table is the bounded side
 * (read from the store), new stream rows are joined as they arrive.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type LocalS3, S3_KEY, S3_SECRET, startLocalS3 } from '../helpers/s3-server.ts';
import { StreamingApi } from '../helpers/streaming-client.ts';

let api: StreamingApi;
let s3: LocalS3;
before(async () => {
  s3 = await startLocalS3();
  api = await StreamingApi.open();
});
after(async () => {
  await api.close();
  await s3.close();
});

test('stream JOIN s3 external table: each new event gets the dimension read from the store', async () => {
  await s3.put('dim/names.csv', '1,"one"\n2,"two"\n');
  await api.exec(
    `CREATE EXTERNAL TABLE dim_s3 (k int32, name string) SETTINGS type='s3', endpoint='${s3.endpoint}/${s3.bucket}', access_key_id='${S3_KEY}', secret_access_key='${S3_SECRET}', read_from='dim/*.csv'`,
  );
  await api.exec('CREATE STREAM clicks (k int32, v int32)');
  const q = await api.start('SELECT c.k, d.name, c.v FROM clicks AS c INNER JOIN dim_s3 AS d ON c.k = d.k');
  await api.ingest(
    'clicks',
    ['k', 'v'],
    [
      [1, 10],
      [3, 30],
      [2, 20],
    ],
  );
  const rows = await q.waitForRows(2);
  assert.deepEqual(
    rows.map((r) => r.slice(0, 3)).sort((a, b) => Number(a[0]) - Number(b[0])),
    [
      [1, 'one', 10],
      [2, 'two', 20],
    ],
  );
  await q.cancel();
});
