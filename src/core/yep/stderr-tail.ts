/**
 * Keeps the last `max` bytes of a stream (a server's stderr). Draining stderr
 * is what prevents a deadlock when a server floods it (hardening F43); keeping
 * only a tail is what keeps memory bounded. The tail is cut before anyone could
 * redact the whole stream, so text() masks what the cut left of a secret too.
 */
import { maskCut, redactText } from '../text/redact.js';

export class ByteTail {
  private chunks: Buffer[] = [];
  private held = 0;
  /** Every byte ever seen. */
  total = 0;

  constructor(private readonly max: number) {}

  push(chunk: Buffer): void {
    this.total += chunk.length;
    if (chunk.length >= this.max) {
      this.chunks = [Buffer.from(chunk.subarray(chunk.length - this.max))];
      this.held = this.max;
      return;
    }
    this.chunks.push(chunk);
    this.held += chunk.length;
    while (this.held - (this.chunks[0]?.length ?? 0) >= this.max) this.held -= this.chunks.shift()!.length;
  }

  /**
   * The tail as text (invalid UTF-8 replaced), at most `max` bytes, with each of
   * `secrets` redacted and, when earlier bytes were dropped, any piece of a
   * secret at the cut masked; prefixed with a marker when truncated.
   */
  text(secrets: readonly string[] = []): string {
    let buf = Buffer.concat(this.chunks);
    if (buf.length > this.max) buf = buf.subarray(buf.length - this.max);
    const cut = this.total > buf.length;
    // A cut inside a multi-byte character: drop its continuation bytes rather than show U+FFFD.
    let skip = 0;
    while (cut && skip < 3 && skip < buf.length && (buf[skip]! & 0xc0) === 0x80) skip++;
    const s = maskCut(redactText(buf.subarray(skip).toString('utf8'), secrets), secrets, { start: cut });
    return cut ? `…(${this.total - buf.length + skip} earlier bytes dropped)\n${s}` : s;
  }
}
