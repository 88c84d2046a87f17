import { spawn } from 'node:child_process';
import { createReadStream, createWriteStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { err } from '../errors/tributary-error.ts';

/**
 * bz2, which the engine has no codec for: Debian's `bzip2` binary, streaming through a child
 * process (stdin to stdout), so no object is ever held whole in memory.
 */
export const BZIP2 = process.env.TRIBUTARY_BZIP2 ?? '/usr/bin/bzip2';

/** bz2 streams start with these bytes (`BZh` and the block size digit). */
export const BZ2_MAGIC = Buffer.from('BZh');

/** Run `bzip2 <args>` from `input` (a stream) into the file `outFile`. */
async function run(args: string[], input: Readable, outFile: string, what: string): Promise<void> {
  const child = spawn(BZIP2, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    if (stderr.length < 2000) stderr += d;
  });
  const exited = new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve(code ?? 1));
  });
  try {
    await Promise.all([pipeline(input, child.stdin), pipeline(child.stdout, createWriteStream(outFile))]);
  } catch (e) {
    child.kill('SIGKILL');
    await exited.catch(() => 1);
    throw err('EXTERNAL_TABLE_OBJECT_STORE', { detail: `${what}: ${stderr.trim() || (e as Error).message}` });
  }
  let code: number;
  try {
    code = await exited;
  } catch (e) {
    throw err('EXTERNAL_TABLE_OBJECT_STORE', {
      detail: `${what}: cannot run ${BZIP2}: ${(e as Error).message}`,
    });
  }
  if (code !== 0)
    throw err('EXTERNAL_TABLE_OBJECT_STORE', {
      detail: `${what}: bzip2 exited with ${code}: ${stderr.trim()}`,
    });
}

/** Compress the file `inFile` into `outFile`. */
export function compressFile(inFile: string, outFile: string): Promise<void> {
  return run(['-c', '-z'], createReadStream(inFile), outFile, `compressing ${inFile}`);
}

/** Decompress the bz2 bytes of `input` (an object's body) into `outFile`; `name` names the object in errors. */
export function decompressTo(input: Readable, outFile: string, name: string): Promise<void> {
  return run(['-c', '-d'], input, outFile, `object ${name} is not valid bz2`);
}
