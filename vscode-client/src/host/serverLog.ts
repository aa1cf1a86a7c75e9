/**
 * Follows a log file that another process appends to (the shared server's, which no window owns)
 * and hands what is appended to a sink, e.g. the pi output channel. Polls: a file moved aside or
 * truncated is read again from its start. Node only, tested with real files.
 */
import * as fs from "node:fs";
import { StringDecoder } from "node:string_decoder";

/** At most this much is read per poll (a burst is caught up over the next polls). */
const MAX_READ = 1024 * 1024;

export class LogTail {
  private offset = 0;
  private inode: number | undefined;
  private decoder = new StringDecoder("utf8");
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly file: string,
    private readonly sink: (text: string) => void,
  ) {}

  /** Start following from the file's current end (what was written before is not repeated). */
  start(intervalMs = 500): void {
    this.skipToEnd();
    this.timer ??= setInterval(() => this.poll(), intervalMs);
  }

  /** Forget what is there now: the next poll shows only what is appended after this. */
  skipToEnd(): void {
    try {
      const stat = fs.statSync(this.file);
      this.offset = stat.size;
      this.inode = stat.ino;
    } catch {
      this.offset = 0;
      this.inode = undefined;
    }
    this.decoder = new StringDecoder("utf8");
  }

  /** Read what was appended since the last poll and pass it on. */
  poll(): void {
    let fd: number;
    try {
      fd = fs.openSync(this.file, "r");
    } catch {
      return; // not there (yet)
    }
    try {
      const stat = fs.fstatSync(fd);
      if (stat.ino !== this.inode || stat.size < this.offset) {
        this.inode = stat.ino; // a new file, or the same one truncated: from its start
        this.offset = 0;
        this.decoder = new StringDecoder("utf8");
      }
      const length = Math.min(stat.size - this.offset, MAX_READ);
      if (length <= 0) return;
      const buffer = Buffer.alloc(length);
      const read = fs.readSync(fd, buffer, 0, length, this.offset);
      this.offset += read;
      const text = this.decoder.write(buffer.subarray(0, read));
      if (text) this.sink(text);
    } finally {
      fs.closeSync(fd);
    }
  }

  dispose(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }
}
