import { createHash } from 'node:crypto';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Engine } from '../../engine/engine.ts';
import type { CheckpointStore, ExecutionCheckpoint, JournalEntry } from '../durability.ts';
import { CheckpointTables } from './checkpoint-tables.ts';
import { JournalFile } from './journal-file.ts';

/** The format of `checkpoint.json`; a file of another version is refused, not misread. */
const FORMAT = 1;

interface CheckpointFile {
  format: number;
  /** Which save this is (0 for the first); names its saved tables. */
  number: number;
  checkpoint: ExecutionCheckpoint;
}

/** Where the checkpoints of every owner live: `<dataDir>/checkpoints/`. */
export function checkpointsDir(dataDir: string): string {
  return join(dataDir, 'checkpoints');
}

/** Owner ids become directory and table names: letters, digits, `_`, `-`, `.` only, and not `.`/`..`. */
export function isValidOwnerId(owner: string): boolean {
  return /^[A-Za-z0-9_.-]{1,128}$/.test(owner) && owner !== '.' && owner !== '..';
}

/**
 * A checkpoint store on the local disk and in the engine (durability.ts): a directory per owner,
 * `<dataDir>/checkpoints/<owner>/`, with `checkpoint.json` (replaced atomically: temp file, fsync,
 * rename, fsync of the directory) and `journal.log` (JournalFile); the state tables saved with a
 * checkpoint are engine tables in `_tributary_checkpoints` (CheckpointTables). A save copies the
 * tables, then writes the JSON, then drops the previous copies and truncates the journal: a crash
 * at any point leaves either the previous checkpoint or the new one in force, never a mix.
 */
export class FileCheckpointStore implements CheckpointStore {
  readonly dir: string;
  private readonly journalFile: JournalFile;
  private readonly tables: CheckpointTables;
  /** The number of the checkpoint in force (-1 before the first). */
  private current = -1;
  private loaded = false;
  /** The directory exists (made once, not at every journal append). */
  private dirMade = false;
  /**
   * The saved tables of this owner in the engine when known exactly (those of the checkpoint in
   * force, after `load`'s clean-up or a finished save); undefined when a save failed half way and
   * left copies nobody named. Known, a save drops the previous copies by name: a view without state
   * tables saves its checkpoints without an engine call (no listing of `system.tables`).
   */
  private held: readonly string[] | undefined;

  private readonly prefix: string;

  constructor(
    private readonly engine: Engine,
    dataDir: string,
    readonly owner: string,
    /** A nested store's place: a directory inside its parent's, a table prefix extending its parent's. */
    place?: { dir: string; prefix: string },
  ) {
    if (!isValidOwnerId(owner)) throw new Error(`invalid checkpoint owner id ${JSON.stringify(owner)}`);
    this.dir = place?.dir ?? join(checkpointsDir(dataDir), owner);
    this.journalFile = new JournalFile(join(this.dir, 'journal.log'));
    // Table names: a readable part of the id and a hash (ids differing only in `.`/`-` stay apart).
    const hash = createHash('sha256').update(owner).digest('hex').slice(0, 12);
    this.prefix = place?.prefix ?? `${owner.replace(/\W/g, '_').slice(0, 64)}_${hash}`;
    this.tables = new CheckpointTables(engine, this.prefix);
  }

  /** The store of nested query `index`: `<dir>/n<index>/`, tables `<prefix>_n<index>__...`. */
  nested(index: number): FileCheckpointStore {
    return new FileCheckpointStore(this.engine, '', this.owner, {
      dir: join(this.dir, `n${index}`),
      prefix: `${this.prefix}_n${index}`,
    });
  }

  private get file(): string {
    return join(this.dir, 'checkpoint.json');
  }

  /** Whether a checkpoint was ever saved for this owner. */
  async exists(): Promise<boolean> {
    return (await this.readFile()) !== undefined;
  }

  async load(): Promise<ExecutionCheckpoint | undefined> {
    const f = await this.readFile();
    this.loaded = true;
    this.current = f?.number ?? -1;
    // Copies of a save that did not finish (or of older checkpoints not yet dropped) go now.
    const keep = Object.values(f?.checkpoint.tables ?? {});
    await this.tables.dropAllBut(keep);
    this.held = keep;
    return f?.checkpoint;
  }

  async save(checkpoint: ExecutionCheckpoint): Promise<void> {
    if (!this.loaded) await this.load();
    await this.makeDir();
    const number = this.current + 1;
    const held = this.held;
    // Until this save finishes, copies it made may exist that no checkpoint names.
    this.held = undefined;
    const tables = await this.tables.save(number, checkpoint.tables);
    const body: CheckpointFile = { format: FORMAT, number, checkpoint: { ...checkpoint, tables } };
    const tmp = `${this.file}.tmp`;
    const fh = await open(tmp, 'w', 0o600);
    try {
      await fh.writeFile(JSON.stringify(body));
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, this.file);
    await syncDir(this.dir);
    this.current = number;
    const keep = Object.values(tables);
    if (held) await this.tables.drop(held.filter((t) => !keep.includes(t)));
    else await this.tables.dropAllBut(keep);
    this.held = keep;
    await this.journalFile.truncate();
  }

  async append(entry: JournalEntry): Promise<void> {
    await this.makeDir();
    await this.journalFile.append(entry);
  }

  private async makeDir(): Promise<void> {
    if (this.dirMade) return;
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    this.dirMade = true;
  }

  async journal(): Promise<JournalEntry[]> {
    const seq = (await this.readFile())?.checkpoint.seq ?? 0;
    return (await this.journalFile.read()).filter((e) => e.seq > seq);
  }

  /** Release the journal's file handle (the store can be used again later). */
  async close(): Promise<void> {
    await this.journalFile.close();
  }

  async destroy(): Promise<void> {
    await this.journalFile.close();
    await this.tables.dropAllBut([]);
    // Nested stores' tables (their directories go with this one's).
    await this.tables.dropNested();
    await rm(this.dir, { recursive: true, force: true });
    this.dirMade = false;
    this.held = [];
    this.current = -1;
  }

  private async readFile(): Promise<CheckpointFile | undefined> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
    const f = JSON.parse(text) as CheckpointFile;
    if (f.format !== FORMAT)
      throw new Error(`checkpoint ${this.file} has format ${f.format}, expected ${FORMAT}`);
    return f;
  }
}

async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
