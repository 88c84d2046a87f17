import assert from 'node:assert/strict';
import { test } from 'node:test';
import { engineError } from '../../src/engine/engine-error.ts';

const failed = (inner: string) =>
  `Code: 754. DB::Exception: User defined function '__trb_uda_sec' failed. Command: 'sec.sh', Arguments: []. Original error: ${inner}`;

test('the function process report becomes the catalogued error', () => {
  const report = (kind: string) =>
    engineError(
      new Error(
        failed(
          `Code: 302. DB::Exception: Child process was exited with return code 1: Stderr: TRIBUTARY_UDF_ERROR {"kind":"${kind}","name":"sec","detail":"boom"}\n. (CHILD_WAS_NOT_EXITED_NORMALLY)`,
        ),
      ),
    );
  assert.deepEqual(
    ['throw', 'process', 'finalize', 'result', 'timeout', 'remote', 'remote_timeout', 'other'].map((k) => {
      const e = report(k);
      return [k, e.errorName, e.code];
    }),
    [
      ['throw', 'UDF_JAVASCRIPT_ERROR', 2533],
      ['process', 'UDF_AGGREGATE_PROCESS_ERROR', 503],
      ['finalize', 'UDF_JAVASCRIPT_ERROR', 2533],
      ['result', 'UDF_BAD_RESULT', 43],
      ['timeout', 'UDF_TIMEOUT', 159],
      ['remote', 'UDF_REMOTE_ERROR', 11101],
      ['remote_timeout', 'UDF_TIMEOUT', 159],
      ['other', 'UDF_FAILED', 11102],
    ],
  );
  assert.equal(report('throw').message, 'JavaScript function sec failed: boom');
});

test('a heap exhausted, a pipe timeout, or another failure of a function process', () => {
  const heap = engineError(
    new Error(
      failed(
        'Code: 302. DB::Exception: Child process was exited with return code 134: Stderr: FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory',
      ),
    ),
  );
  assert.equal(heap.errorName, 'UDF_MEMORY_LIMIT');
  assert.match(heap.message, /sec exceeded its memory limit \(256 MiB/);
  const pipe = engineError(
    new Error(
      failed('Code: 159. DB::Exception: Pipe read timeout exceeded 3000 milliseconds. (TIMEOUT_EXCEEDED)'),
    ),
  );
  assert.equal(pipe.errorName, 'UDF_TIMEOUT');
  const other = engineError(new Error(failed("Code: 27. DB::Exception: Cannot parse input: expected '{'")));
  assert.equal(other.errorName, 'UDF_FAILED');
  assert.match(other.message, /Cannot parse input/);
  // engine errors that are not a function's keep the engine's code
  assert.equal(engineError(new Error('Code: 62. DB::Exception: Syntax error (SYNTAX_ERROR)')).code, 62);
});
