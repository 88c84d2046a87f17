import { realpathSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { err } from '../../errors/tributary-error.ts';

/** The settings of a log external stream, checked (log-external-stream.ts). */
export interface LogSettings {
  /** `log_dir` as written (relative to the user files directory, or absolute inside it). */
  readonly dir: string;
  /** `log_files`: comma-separated regular expressions, each matched against a whole file name. */
  readonly files: readonly RegExp[];
  /** `timestamp_regex`: its first group (or whole match) is the row's `_tp_time`. */
  readonly timestamp?: RegExp;
  /** `row_delimiter`: undefined for lines; else a row starts at every match. */
  readonly delimiter?: RegExp;
}

/** One row read from a log file: its text, and the event time its timestamp_regex found. */
export interface LogRow {
  readonly raw: string;
  readonly time?: Date;
}

/**
 * `log_dir` resolved in the user files directory, symbolic links followed; a directory outside it
 * (`../`, an absolute path elsewhere, a link out) is EXTERNAL_STREAM_PATH_DENIED, a missing one a
 * bad `log_dir`.
 */
export function confinedLogDir(name: string, dir: string, userFilesDir: string): string {
  const root = resolve(userFilesDir);
  const wanted = isAbsolute(dir) ? resolve(dir) : resolve(root, dir);
  const denied = () => err('EXTERNAL_STREAM_PATH_DENIED', { name, path: dir, dir: root });
  if (!insideOrSame(root, wanted)) throw denied();
  let real: string;
  try {
    real = realpathSync(wanted);
    if (!statSync(real).isDirectory()) throw new Error('ENOTDIR');
  } catch (e) {
    throw err('EXTERNAL_STREAM_BAD_SETTING', {
      setting: 'log_dir',
      detail: `${dir} is no directory in the user files directory (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
    });
  }
  if (!insideOrSame(realpathSync(root), real)) throw denied();
  return real;
}

/** Whether file `file` (in the confined directory `dir`) resolves inside it (a link out does not). */
export function fileInside(dir: string, file: string): string | undefined {
  try {
    const real = realpathSync(join(dir, file));
    const rel = relative(dir, real);
    if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return undefined;
    return statSync(real).isFile() ? real : undefined;
  } catch {
    return undefined;
  }
}

function insideOrSame(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/** Whether file name `name` is one `log_files` names. */
export function matchesLogFiles(settings: LogSettings, name: string): boolean {
  return settings.files.some((re) => re.test(name));
}

/**
 * The complete rows at the start of `text` and how many characters they take: with lines, every
 * line ended by `\n` (a trailing `\r` dropped); with a row_delimiter, a row runs from one match to
 * the next (the text before the first match is a row of its own), so the last row waits for the
 * next match. `final` also takes the last unfinished row (preview of a file that is not written to).
 */
export function splitRows(
  settings: LogSettings,
  text: string,
  final = false,
): { rows: LogRow[]; used: number } {
  const raws: string[] = [];
  let used = 0;
  if (!settings.delimiter) {
    let at = 0;
    for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', at)) {
      raws.push(text.slice(at, nl).replace(/\r$/, ''));
      at = nl + 1;
    }
    used = at;
    if (final && at < text.length) {
      raws.push(text.slice(at));
      used = text.length;
    }
  } else {
    const re = new RegExp(settings.delimiter.source, `${settings.delimiter.flags.replace('g', '')}g`);
    const starts: number[] = [];
    for (const m of text.matchAll(re)) {
      if (m[0].length === 0) continue;
      starts.push(m.index ?? 0);
    }
    if (starts.length && starts[0] !== 0) starts.unshift(0);
    for (let i = 0; i + 1 < starts.length; i++)
      raws.push(text.slice(starts[i], starts[i + 1]).replace(/\r?\n$/, ''));
    used = starts.length ? (starts[starts.length - 1] as number) : 0;
    if (final && used < text.length) {
      raws.push(text.slice(used).replace(/\r?\n$/, ''));
      used = text.length;
    }
  }
  return {
    rows: raws.filter((r) => r.length > 0).map((raw) => withTime(settings, raw)),
    used,
  };
}

function withTime(settings: LogSettings, raw: string): LogRow {
  if (!settings.timestamp) return { raw };
  const m = settings.timestamp.exec(raw);
  const text = m ? (m[1] ?? m[0]) : undefined;
  const time = text === undefined ? undefined : parseLogTime(text);
  return time ? { raw, time } : { raw };
}

/**
 * A log timestamp (`2024.01.02 10:11:12.123456`, `2024-01-02T10:11:12Z`, ...): year, month, day,
 * hour, minute, second and fraction in that order, UTC unless it carries an offset; else Date.parse.
 */
export function parseLogTime(text: string): Date | undefined {
  const m =
    /^(\d{4})\D(\d{1,2})\D(\d{1,2})[ T](\d{1,2}):(\d{2}):(\d{2})(?:[.,](\d+))?\s*(Z|[+-]\d{2}:?\d{2})?$/.exec(
      text.trim(),
    );
  if (m) {
    const ms = Number(`0.${m[7] ?? '0'}`) * 1000;
    const utc = Date.UTC(
      Number(m[1]),
      Number(m[2]) - 1,
      Number(m[3]),
      Number(m[4]),
      Number(m[5]),
      Number(m[6]),
    );
    let offset = 0;
    const z = m[8];
    if (z && z !== 'Z') {
      const sign = z.startsWith('-') ? -1 : 1;
      const digits = z.slice(1).replace(':', '');
      offset = sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2))) * 60_000;
    }
    const d = new Date(utc + Math.floor(ms) - offset);
    return Number.isNaN(d.getTime()) ? undefined : d;
  }
  const t = Date.parse(text);
  return Number.isNaN(t) ? undefined : new Date(t);
}
