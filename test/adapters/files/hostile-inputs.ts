import { execFileSync } from 'node:child_process';
import { Readable } from 'node:stream';

/** A stream of `total` bytes of 'x' that counts how many bytes were pulled from it. */
export function countedStream(total: number): { stream: Readable; pulled: () => number } {
  let pulled = 0;
  const chunk = Buffer.alloc(64 * 1024, 'x');
  const stream = new Readable({
    read() {
      if (pulled >= total) {
        this.push(null);
        return;
      }
      pulled += chunk.length;
      this.push(chunk);
    },
  });
  return { stream, pulled: () => pulled };
}

/** Makes a named pipe; false where `mkfifo` is not available (the caller skips). */
export function mkfifo(path: string): boolean {
  try {
    execFileSync('mkfifo', [path], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
