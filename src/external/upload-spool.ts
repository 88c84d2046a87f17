import { mkdir, open, readFile, rename, rm, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import type { OutputTag } from '../streaming/result-sink.ts';

/** What the spool's state file holds (replaced atomically after each append and upload). */
export interface SpoolState {
  /** Tag of the last hand-over in the spool or already uploaded (hand-overs up to it are skipped). */
  lastTag?: OutputTag;
  /** Bytes of `rows.jsonl` that belong to acknowledged hand-overs (a torn append is cut off). */
  length: number;
  /** Key of the object the spooled rows go to (fixed when the first row of a batch arrives). */
  key?: string;
  /** Epoch ms when the first row of the batch arrived (the idle timer runs from it). */
  since?: number;
}

/**
 * A durable buffer of rows waiting to become one object: `rows.jsonl` (JSONCompactEachRow lines,
 * fdatasync'd before a hand-over is acknowledged) and `state.json` (replaced atomically), in a
 * directory of its own. A crash loses no acknowledged row; a hand-over replayed after a crash is
 * recognised by its tag and not spooled twice; an upload repeated after a crash rewrites the same
 * key with the same rows.
 */
export class UploadSpool {
  state: SpoolState = { length: 0 };
  readonly rowsFile: string;
  private readonly stateFile: string;

  private constructor(readonly dir: string) {
    this.rowsFile = join(dir, 'rows.jsonl');
    this.stateFile = join(dir, 'state.json');
  }

  static async open(dir: string): Promise<UploadSpool> {
    const spool = new UploadSpool(dir);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    try {
      spool.state = JSON.parse(await readFile(spool.stateFile, 'utf8')) as SpoolState;
    } catch {
      spool.state = { length: 0 };
    }
    // Rows past the recorded length belong to a hand-over that was never acknowledged.
    const handle = await open(spool.rowsFile, 'a');
    await handle.close();
    await truncate(spool.rowsFile, spool.state.length);
    return spool;
  }

  /** Whether a hand-over with `tag` is already spooled or uploaded. */
  has(tag: OutputTag | undefined): boolean {
    const last = this.state.lastTag;
    if (!tag || !last) return false;
    return tag.seq < last.seq || (tag.seq === last.seq && tag.part <= last.part);
  }

  /** Append rows (one JSON array per line) durably; `key` names the batch's object when it is the first. */
  async append(lines: readonly string[], tag: OutputTag | undefined, key: () => string): Promise<void> {
    const data = Buffer.from(`${lines.join('\n')}\n`);
    const handle = await open(this.rowsFile, 'a');
    try {
      await handle.write(data);
      await handle.datasync();
    } finally {
      await handle.close();
    }
    const first = this.state.length === 0;
    await this.save({
      ...this.state,
      length: this.state.length + data.length,
      ...(tag ? { lastTag: tag } : {}),
      ...(first ? { key: key(), since: Date.now() } : {}),
    });
  }

  /** After the batch is uploaded: empty the spool, remembering the last tag. */
  async uploaded(): Promise<void> {
    await this.save({ length: 0, ...(this.state.lastTag ? { lastTag: this.state.lastTag } : {}) });
    await truncate(this.rowsFile, 0);
  }

  async remove(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }

  private async save(state: SpoolState): Promise<void> {
    const tmp = `${this.stateFile}.tmp`;
    const handle = await open(tmp, 'w', 0o600);
    try {
      await handle.write(JSON.stringify(state));
      await handle.datasync();
    } finally {
      await handle.close();
    }
    await rename(tmp, this.stateFile);
    this.state = state;
  }
}
