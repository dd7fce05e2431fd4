import { constants, type Stats } from 'node:fs';
import { lstat, open, stat } from 'node:fs/promises';
import { InputError } from '../../shared/errors.js';
import { describeLimit } from './limits.js';

/**
 * The limit a read is held to, for its error message: one of the input limits (named with its
 * variable), or a fixed cap's own description such as `limit 1 MiB`.
 */
export type ByteLimit = 'maxInputBytes' | 'maxWorldBytes' | { readonly description: string };

function describeByteLimit(maxBytes: number, limit: ByteLimit): string {
  return typeof limit === 'string'
    ? describeLimit({ [limit]: maxBytes }, limit)
    : limit.description;
}

const CHUNK_BYTES = 64 * 1024;

function tooLarge(maxBytes: number, limit: ByteLimit): InputError {
  return new InputError(`too large (${describeByteLimit(maxBytes, limit)}); not read further`);
}

/**
 * Manifest bytes as kubectl decodes them (k8s.io/cli-runtime's FileVisitor, for files and
 * standard input alike: golang.org/x/text BOMOverride over UTF-8): a UTF-16LE or UTF-16BE byte
 * order mark switches to UTF-16, a UTF-8 one is dropped, anything else is UTF-8 with invalid bytes
 * replaced. UTF-32, which kubectl cannot read, is refused; UTF-16 without a byte order mark decodes
 * to NUL characters, which the parser refuses as kubectl does.
 */
export function decodeManifestBytes(bytes: Uint8Array): string {
  const [b0, b1, b2, b3] = bytes;
  if (
    (b0 === 0xff && b1 === 0xfe && b2 === 0 && b3 === 0) ||
    (b0 === 0 && b1 === 0 && b2 === 0xfe && b3 === 0xff)
  ) {
    throw new InputError(
      'is UTF-32 (byte order mark), which kubectl cannot read: save it as UTF-8; not scanned'
    );
  }
  if (b0 === 0xff && b1 === 0xfe) {
    return new TextDecoder('utf-16le', { ignoreBOM: true }).decode(bytes.subarray(2));
  }
  if (b0 === 0xfe && b1 === 0xff) {
    // Swapped into UTF-16LE, which every Node build decodes (UTF-16BE needs full ICU).
    const swapped = Buffer.from(bytes.subarray(2));
    swapped.subarray(0, swapped.length - (swapped.length % 2)).swap16();
    return new TextDecoder('utf-16le', { ignoreBOM: true }).decode(swapped);
  }
  const start = b0 === 0xef && b1 === 0xbb && b2 === 0xbf ? 3 : 0;
  return Buffer.from(bytes.buffer, bytes.byteOffset + start, bytes.byteLength - start).toString(
    'utf8'
  );
}

/**
 * Reads manifest text from a stream (standard input), decoded as `decodeManifestBytes` does,
 * stopping as soon as it passes `maxBytes`: at most one chunk past the cap is ever held, whatever
 * the writer sends. Leaving the loop early destroys the stream.
 */
export async function readCapped(
  source: AsyncIterable<Uint8Array | string>,
  maxBytes: number,
  limit: ByteLimit
): Promise<string> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of source) {
    const bytes =
      typeof chunk === 'string'
        ? Buffer.from(chunk, 'utf8')
        : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    total += bytes.length;
    if (total > maxBytes) throw tooLarge(maxBytes, limit);
    chunks.push(bytes);
  }
  return decodeManifestBytes(Buffer.concat(chunks, total));
}

function kindOf(info: Stats): string {
  if (info.isDirectory()) return 'a directory';
  if (info.isFIFO()) return 'a named pipe (FIFO)';
  if (info.isCharacterDevice()) return 'a character device';
  if (info.isBlockDevice()) return 'a block device';
  if (info.isSocket()) return 'a socket';
  return 'a special file';
}

/**
 * Throws an InputError unless `path` is (or links to) a regular file. Checked before opening:
 * opening a FIFO blocks until a writer appears, and a device such as /dev/zero never ends.
 */
export async function assertRegularFile(path: string): Promise<Stats> {
  const info = await stat(path);
  if (info.isFile()) return info;
  const link = (await lstat(path)).isSymbolicLink();
  throw new InputError(
    `${link ? 'a symbolic link to ' : ''}${kindOf(info)}, not a regular file; not read`
  );
}

/**
 * Reads a regular file, refusing anything else and stopping at `maxBytes`. Opened non-blocking and
 * checked again on the descriptor, so a file swapped for a FIFO after the first check cannot hang
 * the read either.
 */
export async function readRegularFileBytes(
  path: string,
  maxBytes: number,
  limit: ByteLimit
): Promise<Buffer> {
  const info = await assertRegularFile(path);
  if (info.size > maxBytes) {
    throw new InputError(
      `is ${info.size} bytes, too large (${describeByteLimit(maxBytes, limit)}); not read`
    );
  }
  // O_NONBLOCK does not exist on Windows, where opening a pipe by path does not block anyway.
  const handle = await open(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  try {
    const opened = await handle.stat();
    if (!opened.isFile()) throw new InputError(`${kindOf(opened)}, not a regular file; not read`);
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buffer = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, maxBytes + 1 - total));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      // The file grew past the cap after the size check.
      if (total > maxBytes) throw tooLarge(maxBytes, limit);
      chunks.push(buffer.subarray(0, bytesRead));
    }
    return Buffer.concat(chunks, total);
  } finally {
    await handle.close();
  }
}

/** `readRegularFileBytes` as UTF-8 text (world, config and baseline files). */
export async function readRegularFile(
  path: string,
  maxBytes: number,
  limit: ByteLimit
): Promise<string> {
  return (await readRegularFileBytes(path, maxBytes, limit)).toString('utf8');
}
