import { type FileHandle, open, readFile } from 'node:fs/promises';
import type { JournalEntry } from '../durability.ts';

/**
 * The journal of a durable execution: one JSON line per event, appended and fdatasync'd before
 * `append` resolves. A crash in the middle of an append leaves a torn last line: reading ignores
 * it, and the first append after a restart cuts it off before writing.
 */
export class JournalFile {
  private handle: FileHandle | undefined;

  constructor(readonly path: string) {}

  async append(entry: JournalEntry): Promise<void> {
    const fh = await this.open();
    await fh.appendFile(`${JSON.stringify(entry)}\n`);
    await fh.datasync();
  }

  /** The entries in the file, in order; a torn last line is left out. */
  async read(): Promise<JournalEntry[]> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw e;
    }
    const complete = text.slice(0, text.lastIndexOf('\n') + 1);
    const entries: JournalEntry[] = [];
    for (const line of complete.split('\n')) {
      if (line.trim() === '') continue;
      entries.push(JSON.parse(line) as JournalEntry);
    }
    return entries;
  }

  /** Drop every entry (a checkpoint now holds them). */
  async truncate(): Promise<void> {
    const fh = await this.open();
    await fh.truncate(0);
    await fh.datasync();
  }

  async close(): Promise<void> {
    const fh = this.handle;
    this.handle = undefined;
    await fh?.close();
  }

  private async open(): Promise<FileHandle> {
    if (this.handle) return this.handle;
    const fh = await open(this.path, 'a+');
    // Cut a torn last line (a crash in the middle of an append) so the next entry starts a line.
    const { size } = await fh.stat();
    if (size > 0) {
      const tail = Buffer.alloc(Math.min(size, 1 << 16));
      let end = size;
      let keep = -1;
      while (end > 0 && keep < 0) {
        const start = Math.max(0, end - tail.length);
        const { bytesRead } = await fh.read(tail, 0, end - start, start);
        const at = tail.subarray(0, bytesRead).lastIndexOf(0x0a);
        if (at >= 0) keep = start + at + 1;
        end = start;
      }
      const cut = Math.max(keep, 0);
      if (cut < size) {
        await fh.truncate(cut);
        await fh.datasync();
      }
    }
    this.handle = fh;
    return fh;
  }
}
