/**
 * Keeps the last `max` bytes of a stream (a server's stderr). Draining stderr
 * is what prevents a deadlock when a server floods it (hardening F43); keeping
 * only a tail is what keeps memory bounded.
 */
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

  /** The tail as text (invalid UTF-8 replaced), at most `max` bytes, prefixed with a marker when truncated. */
  text(): string {
    let buf = Buffer.concat(this.chunks);
    if (buf.length > this.max) buf = buf.subarray(buf.length - this.max);
    const s = buf.toString('utf8');
    return this.total > buf.length ? `…(${this.total - buf.length} earlier bytes dropped)\n${s}` : s;
  }
}
