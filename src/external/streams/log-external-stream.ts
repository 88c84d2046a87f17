import { open, readdir, stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  badSetting,
  type ExternalStreamKind,
  type ExternalStreamShape,
  type PreviewEvent,
  registerExternalStreamKind,
} from './external-stream-kind.ts';
import {
  confinedLogDir,
  fileInside,
  type LogRow,
  type LogSettings,
  matchesLogFiles,
  splitRows,
} from './log-files.ts';
import { LogFollower } from './log-follower.ts';

/** Settings of `type='log'` (Proton's names, and Tributary's poll_interval_ms). */
const KNOWN = new Set([
  'type',
  'log_dir',
  'log_files',
  'timestamp_regex',
  'row_delimiter',
  'poll_interval_ms',
]);
const DEFAULT_POLL_MS = 500;
/** Bytes a preview reads of one file. */
const PREVIEW_READ = 4 * 1024 * 1024;

function text(s: ExternalStreamShape, name: string): string | undefined {
  const v = s.settings[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw badSetting(name, `expected a string; got ${JSON.stringify(v)}`);
  return v;
}

function regex(name: string, source: string, anchored = false): RegExp {
  try {
    return new RegExp(anchored ? `^(?:${source})$` : source);
  } catch (e) {
    throw badSetting(name, `not a valid regular expression: ${(e as Error).message}`);
  }
}

/** The checked settings of a log external stream (without the directory's confinement). */
export function logSettings(s: ExternalStreamShape): LogSettings & { pollMs: number } {
  for (const k of Object.keys(s.settings))
    if (!KNOWN.has(k))
      throw badSetting(k, `unknown setting of a log external stream (known: ${[...KNOWN].join(', ')})`);
  const dir = text(s, 'log_dir');
  if (!dir)
    throw badSetting('log_dir', 'required: the directory (in the user files directory) of the log files');
  const files = text(s, 'log_files');
  if (!files)
    throw badSetting('log_files', 'required: the file names to read (regular expressions, comma-separated)');
  const ts = text(s, 'timestamp_regex');
  const delimiter = text(s, 'row_delimiter');
  const poll = s.settings.poll_interval_ms ?? DEFAULT_POLL_MS;
  const pollMs = typeof poll === 'string' && /^\d+$/.test(poll) ? Number(poll) : poll;
  if (typeof pollMs !== 'number' || !Number.isInteger(pollMs) || pollMs < 10 || pollMs > 600_000)
    throw badSetting(
      'poll_interval_ms',
      `expected an integer from 10 to 600000; got ${JSON.stringify(poll)}`,
    );
  if (s.columns.length > 1 || (s.columns[0] && !/^string$/i.test(s.columns[0].type)))
    throw badSetting(
      'columns',
      'a log external stream has one string column (raw string), which holds each row',
    );
  return {
    dir,
    files: files
      .split(',')
      .map((f) => f.trim())
      .filter(Boolean)
      .map((f) => regex('log_files', f, true)),
    ...(ts ? { timestamp: regex('timestamp_regex', ts) } : {}),
    ...(delimiter && delimiter !== '\n' && delimiter !== '\\n'
      ? { delimiter: regex('row_delimiter', delimiter) }
      : {}),
    pollMs,
  };
}

const columnOf = (s: ExternalStreamShape) => s.columns[0]?.name ?? 'raw';

function event(column: string, row: LogRow): PreviewEvent {
  return row.time ? { [column]: row.raw, _tp_time: row.time.toISOString() } : { [column]: row.raw };
}

/** The files of the stream in the order they are read (oldest modification first), with sizes. */
async function logFiles(dir: string, settings: LogSettings) {
  const out: { path: string; size: number; mtime: number; name: string }[] = [];
  for (const name of await readdir(dir)) {
    if (!matchesLogFiles(settings, name)) continue;
    const path = fileInside(dir, name);
    if (!path) continue;
    const st = await stat(path);
    out.push({ name, path, size: st.size, mtime: st.mtimeMs });
  }
  return out.sort((a, b) => a.mtime - b.mtime || a.name.localeCompare(b.name));
}

async function readRange(path: string, offset: number, length: number): Promise<string> {
  const handle = await open(path, 'r');
  try {
    const buf = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buf, 0, length, offset);
    return buf.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

/**
 * `type='log'`: the rows of the files `log_files` names in `log_dir` (confined to the user files
 * directory), one row per line or per `row_delimiter` match, in a string column (`raw`), `_tp_time`
 * from `timestamp_regex` when it matches. A LogFollower commits them into the stream of the same
 * name, so `table(s)` reads every row read so far (every existing line from the CREATE on), a
 * streaming SELECT follows new lines (from latest by default, `seek_to='earliest'` from the first).
 */
export const LOG_EXTERNAL_STREAM: ExternalStreamKind = {
  type: 'log',
  readable: true,
  defaultColumns: [{ name: 'raw', type: 'string' }],
  isSecret: () => false,
  check(s) {
    logSettings(s);
  },
  follow(c) {
    const settings = logSettings(c.shape);
    const dir = confinedLogDir(c.name, settings.dir, c.userFilesDir);
    const column = columnOf(c.shape);
    return new LogFollower({
      describe: `${c.db}.${c.name}`,
      dir,
      settings,
      pollMs: settings.pollMs,
      ...(c.stateFile ? { stateFile: c.stateFile } : {}),
      ...(c.logger ? { logger: c.logger } : {}),
      commit: (rows, id) =>
        c.commit(
          rows.map((r) => (r.time ? { [column]: r.raw, _tp_time: r.time } : { [column]: r.raw })),
          id,
        ),
    });
  },
  async preview(shape, request, context) {
    const settings = logSettings(shape);
    const dir = confinedLogDir(context.name, settings.dir, context.userFilesDir);
    const column = columnOf(shape);
    const out: PreviewEvent[] = [];
    if (request.offset === 'earliest') {
      for (const f of await logFiles(dir, settings)) {
        const { rows } = splitRows(settings, await readRange(f.path, 0, Math.min(f.size, PREVIEW_READ)));
        for (const r of rows) {
          out.push(event(column, r));
          if (out.length >= request.count) return out;
        }
      }
      return out;
    }
    // latest: what is appended from now on, until `count` rows or the timeout.
    const offsets = new Map((await logFiles(dir, settings)).map((f) => [f.name, f.size]));
    const deadline = Date.now() + request.timeoutMs;
    while (Date.now() < deadline && !request.signal?.aborted) {
      await sleep(Math.min(settings.pollMs, 100));
      for (const f of await logFiles(dir, settings)) {
        let offset = offsets.get(f.name) ?? 0;
        if (f.size < offset) offset = 0;
        if (f.size === offset) continue;
        const chunk = await readRange(f.path, offset, Math.min(f.size - offset, PREVIEW_READ));
        const { rows, used } = splitRows(settings, chunk);
        offsets.set(f.name, offset + Buffer.byteLength(chunk.slice(0, used), 'utf8'));
        for (const r of rows) {
          out.push(event(column, r));
          if (out.length >= request.count) return out;
        }
      }
    }
    return out;
  },
};

registerExternalStreamKind(LOG_EXTERNAL_STREAM);
