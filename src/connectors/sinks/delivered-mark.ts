import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Where a delivery is: the output tag of the durable execution (`seq`, `part`) and the batch within
 * that hand-over (a hand-over larger than the batch size goes out in several requests).
 */
export interface DeliveryPosition {
  readonly seq: number;
  readonly part: number;
  readonly batch: number;
}

/** Whether position `a` comes strictly after `b` (undefined: nothing delivered yet). */
export function positionAfter(a: DeliveryPosition, b: DeliveryPosition | undefined): boolean {
  if (!b) return true;
  if (a.seq !== b.seq) return a.seq > b.seq;
  if (a.part !== b.part) return a.part > b.part;
  return a.batch > b.batch;
}

/**
 * The last batch a receiver acknowledged, kept durably in one small JSON file replaced atomically
 * (temp file, fsync, rename, fsync of the directory). It is written after each acknowledged batch,
 * so after a crash a replayed execution resends only batches after it; a crash between the
 * receiver's answer and this write resends that one batch, with the same idempotency key.
 */
export class DeliveredMark {
  private value: DeliveryPosition | undefined;
  private loaded = false;

  constructor(readonly file: string) {}

  async load(): Promise<DeliveryPosition | undefined> {
    if (this.loaded) return this.value;
    try {
      const v = JSON.parse(await readFile(this.file, 'utf8')) as DeliveryPosition;
      if (Number.isInteger(v.seq) && Number.isInteger(v.part) && Number.isInteger(v.batch)) this.value = v;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    this.loaded = true;
    return this.value;
  }

  get current(): DeliveryPosition | undefined {
    return this.value;
  }

  async save(p: DeliveryPosition): Promise<void> {
    await mkdir(dirname(this.file), { recursive: true });
    const tmp = `${this.file}.tmp`;
    const fh = await open(tmp, 'w');
    try {
      await fh.writeFile(JSON.stringify(p));
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, this.file);
    const dir = await open(dirname(this.file), 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
    this.value = p;
  }

  async destroy(): Promise<void> {
    await rm(this.file, { force: true });
    await rm(`${this.file}.tmp`, { force: true });
    this.value = undefined;
  }
}
