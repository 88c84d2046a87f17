import { mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Logger } from '../../log/logger.ts';
import { fileInside, type LogRow, type LogSettings, matchesLogFiles, splitRows } from './log-files.ts';

/** Where each followed file has been read to (bytes of complete rows committed). */
type Offsets = Record<string, number>;

export interface LogFollowerOptions {
  /** `db.name`, for logs. */
  readonly describe: string;
  /** The confined log directory (real path). */
  readonly dir: string;
  readonly settings: LogSettings;
  /** How often the directory is looked at again. */
  readonly pollMs: number;
  /** Where the offsets are kept across restarts (none: kept in memory). */
  readonly stateFile?: string;
  /** Commit rows read from `file` between two byte offsets; the id makes a repeat write nothing. */
  commit(rows: readonly LogRow[], idempotencyId: string): Promise<void>;
  readonly logger?: Logger;
}

/** Bytes read from one file in one step (a larger file is read over several steps). */
const MAX_READ = 4 * 1024 * 1024;

/**
 * Follows the files of a log external stream: every `pollMs` it lists the directory, and for each
 * file `log_files` names (oldest modification first) reads what was appended since its offset, splits
 * it into complete rows and commits them, then records the new offset. A file shorter than its
 * offset was truncated or replaced and is read again from its start. Commits carry the file and
 * byte range as their idempotency id, so a crash between a commit and the offsets' write does not
 * repeat rows.
 */
export class LogFollower {
  private offsets: Offsets = {};
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private lastError = '';

  constructor(private readonly o: LogFollowerOptions) {}

  async start(): Promise<void> {
    if (this.o.stateFile) {
      try {
        this.offsets = JSON.parse(await readFile(this.o.stateFile, 'utf8')) as Offsets;
      } catch {
        this.offsets = {};
      }
    }
    this.schedule(0);
  }

  /** Stop following; resolves once a step in progress ends. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  /** Stop and forget the offsets (DROP). */
  async destroy(): Promise<void> {
    await this.stop();
    if (this.o.stateFile) await rm(this.o.stateFile, { force: true });
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.step()
        .catch((e) => {
          const message = e instanceof Error ? e.message : String(e);
          if (message !== this.lastError)
            this.o.logger?.warn({ stream: this.o.describe, err: message }, 'log external stream read failed');
          this.lastError = message;
        })
        .finally(() => this.schedule(this.o.pollMs));
    }, ms);
    this.timer.unref?.();
  }

  /** One look at the directory: commit what every matching file gained. */
  private async step(): Promise<void> {
    const names = (await readdir(this.o.dir)).filter((n) => matchesLogFiles(this.o.settings, n));
    const files: { name: string; path: string; mtime: number; size: number }[] = [];
    for (const name of names) {
      const path = fileInside(this.o.dir, name);
      if (!path) continue;
      const s = await stat(path);
      files.push({ name, path, mtime: s.mtimeMs, size: s.size });
    }
    files.sort((a, b) => a.mtime - b.mtime || a.name.localeCompare(b.name));
    let changed = false;
    for (const f of files) {
      if (this.stopped) break;
      let offset = this.offsets[f.name] ?? 0;
      if (f.size < offset) offset = 0;
      while (offset < f.size && !this.stopped) {
        const used = await this.readFrom(f.name, f.path, offset, Math.min(f.size - offset, MAX_READ));
        if (used === 0) break;
        offset += used;
        this.offsets[f.name] = offset;
        await this.save();
      }
      if (this.offsets[f.name] !== offset) {
        this.offsets[f.name] = offset;
        changed = true;
      }
    }
    if (changed) await this.save();
    this.lastError = '';
  }

  /** Read `length` bytes of `path` at `offset`, commit its complete rows; the bytes they took. */
  private async readFrom(name: string, path: string, offset: number, length: number): Promise<number> {
    const handle = await open(path, 'r');
    let text: string;
    try {
      const buf = Buffer.alloc(length);
      const { bytesRead } = await handle.read(buf, 0, length, offset);
      text = buf.subarray(0, bytesRead).toString('utf8');
    } finally {
      await handle.close();
    }
    const { rows, used } = splitRows(this.o.settings, text);
    const bytes = Buffer.byteLength(text.slice(0, used), 'utf8');
    if (bytes === 0) return 0;
    if (rows.length) await this.o.commit(rows, `log:${name}:${offset}:${offset + bytes}`);
    return bytes;
  }

  private async save(): Promise<void> {
    if (!this.o.stateFile) return;
    const tmp = `${this.o.stateFile}.tmp`;
    await mkdir(dirname(this.o.stateFile), { recursive: true });
    await writeFile(tmp, JSON.stringify(this.offsets));
    await rename(tmp, this.o.stateFile);
  }
}
