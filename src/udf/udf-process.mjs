// The process the engine runs for one user-defined function (an `executable_pool` function, see
// udf-engine-files.ts). Plain JavaScript: the engine starts it with `node`, no TypeScript loader.
//
// Protocol (ClickHouse executable functions, JSONEachRow with send_chunk_header): before each
// chunk a line with its row count, then one JSON object per row (the arguments by name); answer
// one `{"result": ...}` line per row, in order.
//
// - javascript scalar: the body is evaluated once in a node:vm context; the function named like
//   the UDF gets one array per argument and returns an array of results (Proton's contract);
// - javascript aggregate: each row holds one group's argument arrays (the query's group_array
//   of each argument) and the deltas of its rows (empty unless the input is a changelog); a fresh
//   object from the body runs initialize, process(columns..., [deltas]), finalize and its result
//   is the group's value; an aggregate that keeps its state serialized (uda-state.ts) also gets
//   the group's serialized states (deserialize, then merge the others, before process), and its
//   fold function (argv[3] = fold) answers serialize() instead of finalize();
// - javascript aggregate with its own emit (has_customized_emit): each row also holds the batch
//   and sequence number of each value and the batch being emitted; the older batches are replayed
//   (process, then finalize to drain what it emitted), the current batch processed, and the group
//   answers finalize()'s array when process() returned a count above zero (else an empty array);
// - remote: the chunk is POSTed as `{"<arg>": [...]}` and the answer `{"result": [...]}` read.
//
// A failure writes one line `TRIBUTARY_UDF_ERROR {"kind", "detail"}` to stderr and exits 1: the
// engine fails that query with the line in its message (engine-error.ts turns it into the
// catalogued error) and starts a fresh process for the next one. The time limit is vm's timeout
// (synchronous loops included); the memory limit is the process's --max-old-space-size.
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import vm from 'node:vm';

const spec = JSON.parse(readFileSync(process.argv[2], 'utf8'));
// `fold`: the function folding an aggregate's values and states into its serialized state
const FOLD = process.argv[3] === 'fold';

function fail(kind, detail) {
  process.stderr.write(`TRIBUTARY_UDF_ERROR ${JSON.stringify({ kind, name: spec.name, detail })}\n`);
  process.exit(1);
}

function messageOf(e) {
  if (e && typeof e === 'object' && 'message' in e) return String(e.message);
  return String(e);
}

const INTEGER = /^u?int(8|16|32|64|128|256)$/i;

/** The engine quotes 64-bit and wider integers in JSON; JavaScript gets numbers, as in Proton. */
function inputConverter(type) {
  const t = type.trim().toLowerCase();
  if (INTEGER.test(t)) return (v) => (typeof v === 'string' ? Number(v) : v);
  if (t.startsWith('array(') && INTEGER.test(t.slice(6, -1).trim()))
    return (v) => v.map((x) => (typeof x === 'string' ? Number(x) : x));
  return undefined;
}

const pad = (n, w = 2) => String(n).padStart(w, '0');

/** A JavaScript Date becomes the engine's `YYYY-MM-DD hh:mm:ss.fff` (UTC); tuples from objects keep their field order. */
function outputValue(v) {
  if (v instanceof Date || Object.prototype.toString.call(v) === '[object Date]') {
    const d = new Date(v.getTime());
    return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${pad(d.getUTCMilliseconds(), 3)}`;
  }
  if (typeof v === 'bigint') return v.toString();
  if (Array.isArray(v)) return v.map(outputValue);
  if (v && typeof v === 'object') {
    const out = {};
    for (const [k, x] of Object.entries(v)) out[k] = outputValue(x);
    return out;
  }
  return v;
}

const argNames = spec.arguments.map((a) => a.name);
const converters = spec.arguments.map((a) => inputConverter(a.type));

/** Rows of `{arg: value}` as one array per argument, converted for JavaScript. */
function columnsOf(rows) {
  return argNames.map((name, i) => {
    const conv = converters[i];
    const col = new Array(rows.length);
    for (let r = 0; r < rows.length; r++) {
      const v = rows[r][name];
      col[r] = conv && v !== null && v !== undefined ? conv(v) : v;
    }
    return col;
  });
}

function makeJavaScript() {
  const context = vm.createContext({}, { microtaskMode: 'afterEvaluate', name: `udf ${spec.name}` });
  const timeout = spec.timeoutMs;
  const run = (code, file) => new vm.Script(code, { filename: file }).runInContext(context, { timeout });
  try {
    if (spec.aggregate) {
      run(`globalThis.__trb_make = function () { return (${spec.source}\n); };`, `${spec.name}.js`);
    } else {
      run(spec.source, `${spec.name}.js`);
      run(`globalThis.__trb_fn = ${spec.name};`, 'bind.js');
    }
  } catch (e) {
    fail(e && e.code === 'ERR_SCRIPT_EXECUTION_TIMEOUT' ? 'timeout' : 'definition', messageOf(e));
  }
  // The drivers run inside the context, so the time limit covers the whole chunk.
  const driver = spec.customizedEmit
    ? new vm.Script(`(function (groups) {
        const message = (e) => String(e && e.message !== undefined ? e.message : e);
        const out = new Array(groups.length);
        for (let g = 0; g < groups.length; g++) {
          const row = groups[g];
          const batches = row[0], sns = row[1], current = row[row.length - 1];
          const values = row.slice(2, row.length - 1);
          const order = batches.map((_, i) => i).sort((a, b) => sns[a] - sns[b]);
          const older = values.map(() => []), newer = values.map(() => []);
          let olderCount = 0, newerCount = 0;
          for (const i of order) {
            const into = batches[i] < current ? older : batches[i] === current ? newer : undefined;
            if (!into) continue;
            if (into === older) olderCount++; else newerCount++;
            for (let v = 0; v < values.length; v++) into[v].push(values[v][i]);
          }
          out[g] = [];
          if (newerCount === 0) continue;
          const o = __trb_make();
          try { if (typeof o.initialize === 'function') o.initialize(); }
          catch (e) { return { error: 'throw', detail: 'initialize(): ' + message(e) }; }
          // the batches emitted before: replayed, their results drained as they were then
          if (olderCount > 0) {
            let n;
            try { n = o.process.apply(o, older); }
            catch (e) { return { error: 'process', detail: message(e) }; }
            if (typeof n === 'number' && n > 0) {
              try { o.finalize(); }
              catch (e) { return { error: 'finalize', detail: message(e) }; }
            }
          }
          let n;
          try { n = o.process.apply(o, newer); }
          catch (e) { return { error: 'process', detail: message(e) }; }
          if (n === undefined) n = 0;
          if (typeof n !== 'number' || !Number.isInteger(n) || n < 0)
            return { error: 'emit_count', detail: 'process() must return how many results to emit (a number), not ' + JSON.stringify(n) };
          if (n === 0) continue;
          let r;
          try { r = o.finalize(); }
          catch (e) { return { error: 'finalize', detail: message(e) }; }
          if (!Array.isArray(r)) return { error: 'finalize', detail: 'finalize() must return an array of the results to emit' };
          if (r.length !== n)
            return { error: 'finalize', detail: 'process() asked to emit ' + n + ' times but finalize() returned ' + r.length + ' results' };
          out[g] = r;
        }
        return { out };
      })(__trb_input)`)
    : spec.aggregate
      ? new vm.Script(`(function (groups, serialized, fold) {
        const message = (e) => String(e && e.message !== undefined ? e.message : e);
        const out = new Array(groups.length);
        for (let g = 0; g < groups.length; g++) {
          const o = __trb_make();
          try { if (typeof o.initialize === 'function') o.initialize(); }
          catch (e) { return { error: 'throw', detail: 'initialize(): ' + message(e) }; }
          const row = groups[g];
          // a state kept serialized: the group's states (last) restore the object first
          const states = serialized ? row[row.length - 1] : [];
          const rest = serialized ? row.slice(0, row.length - 1) : row;
          for (let i = 0; i < states.length; i++) {
            const how = i === 0 ? 'deserialize' : 'merge';
            if (typeof o[how] !== 'function')
              return { error: 'throw', detail: how + '() is needed to combine ' + states.length + ' partial states of a group' };
            try { o[how](states[i]); }
            catch (e) { return { error: 'throw', detail: how + '(): ' + message(e) }; }
          }
          // the deltas follow the values only over a changelog input, as in Proton
          const deltas = rest[rest.length - 1];
          const args = deltas.length > 0 ? rest : rest.slice(0, rest.length - 1);
          // process() gets rows; a restored state with no newer rows is not processed again
          if (states.length === 0 || (args.length > 0 && args[0].length > 0)) {
            try { o.process.apply(o, args); }
            catch (e) { return { error: 'process', detail: message(e) }; }
          }
          let r;
          if (fold) {
            try { r = o.serialize(); }
            catch (e) { return { error: 'throw', detail: 'serialize(): ' + message(e) }; }
            if (typeof r !== 'string') return { error: 'throw', detail: 'serialize() must return a string, not ' + typeof r };
          } else {
            try { r = o.finalize(); }
            catch (e) { return { error: 'finalize', detail: message(e) }; }
            if (r === undefined) return { error: 'finalize', detail: 'finalize() returned nothing' };
          }
          out[g] = r;
        }
        return { out };
      })(__trb_input, ${spec.serializedState === true}, ${FOLD})`)
      : new vm.Script(`(function (cols) {
        try { return { out: __trb_fn.apply(null, cols) }; }
        catch (e) { return { error: 'throw', detail: String(e && e.message !== undefined ? e.message : e) }; }
      })(__trb_input)`);
  return async (rows) => {
    const cols = columnsOf(rows);
    // aggregate: row r's arrays, one per argument
    context.__trb_input = spec.aggregate ? rows.map((_, r) => cols.map((c) => c[r] ?? [])) : cols;
    let answer;
    try {
      answer = driver.runInContext(context, { timeout });
    } catch (e) {
      if (e && e.code === 'ERR_SCRIPT_EXECUTION_TIMEOUT')
        fail('timeout', `did not return within ${timeout} ms`);
      fail('throw', messageOf(e));
    }
    if (answer.error) fail(answer.error, answer.detail);
    const out = answer.out;
    if (!spec.aggregate && (!out || typeof out.length !== 'number' || out.length !== rows.length))
      fail(
        'result',
        `returned ${out === undefined ? 'nothing' : Array.isArray(out) ? `an array of ${out.length} values` : typeof out} for ${rows.length} rows; it must return an array with one value per row`,
      );
    return Array.from(out, outputValue);
  };
}

function makeRemote() {
  const headers = { 'content-type': 'application/json' };
  if (spec.authHeader) headers[spec.authHeader] = spec.authKey ?? '';
  return async (rows) => {
    const cols = columnsOf(rows);
    const body = {};
    argNames.forEach((n, i) => {
      body[n] = cols[i];
    });
    let res;
    try {
      res = await fetch(spec.url, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(spec.timeoutMs),
      });
    } catch (e) {
      if (e && (e.name === 'TimeoutError' || e.name === 'AbortError'))
        fail('remote_timeout', `${spec.url} did not answer within ${spec.timeoutMs} ms`);
      fail('remote', `cannot reach ${spec.url}: ${messageOf(e.cause ?? e)}`);
    }
    const text = await res.text().catch((e) => fail('remote', messageOf(e)));
    if (!res.ok) fail('remote', `${spec.url} answered HTTP ${res.status}: ${text.slice(0, 200)}`);
    let parsed;
    try {
      parsed = JSON.parse(text);
    } catch {
      fail('remote', `${spec.url} answered something that is not JSON: ${text.slice(0, 200)}`);
    }
    const result = parsed?.result;
    if (!Array.isArray(result) || result.length !== rows.length)
      fail(
        'remote',
        `${spec.url} must answer {"result": [...]} with ${rows.length} values; it answered ${text.slice(0, 200)}`,
      );
    return result.map(outputValue);
  };
}

const evaluate = spec.kind === 'remote' ? makeRemote() : makeJavaScript();

// Chunks are handled one at a time, in order.
let expected = -1;
let rows = [];
let queue = Promise.resolve();
const lines = createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY });
lines.on('line', (line) => {
  if (expected < 0) {
    expected = Number(line);
    rows = [];
    if (!(expected > 0)) expected = -1;
    return;
  }
  rows.push(JSON.parse(line));
  if (rows.length < expected) return;
  const chunk = rows;
  expected = -1;
  rows = [];
  queue = queue.then(async () => {
    const results = await evaluate(chunk);
    let out = '';
    for (const r of results) out += `${JSON.stringify({ result: r === undefined ? null : r })}\n`;
    if (!process.stdout.write(out)) await new Promise((resolve) => process.stdout.once('drain', resolve));
  });
});
lines.on('close', () => {
  queue.then(() => process.exit(0));
});
