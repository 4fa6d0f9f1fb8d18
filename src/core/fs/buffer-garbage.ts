/**
 * Prompt collection of buffer garbage during a long transfer. Every socket read
 * (undici) and every stream chunk is a fresh buffer outside V8's heap, and V8
 * collects such buffers only once ~32 MiB of them have piled up: that pile was
 * most of the growth of the peak RSS during a download and while copying it
 * into the download cache (docs/performance.md, "Round three: memory"). A
 * young-generation collection every 4 MiB frees them at a cost of well under a
 * millisecond each (a full one cost ~1 s of CPU over a 200 MB install).
 *
 * 4 MiB by default. A download collects every 1 MiB (DOWNLOAD_EVERY): its socket
 * reads are all it makes, and nothing holds them once copied into the hash batch,
 * so a shorter period frees them sooner at no measurable cost; 4 MiB let ~20 MiB
 * of freed-but-unswept reads build up, which put the 200 MB install at 80-82 MiB
 * on Node 24 (68-69 with 1 MiB; Node 20 66-69 -> 63-64; docs/performance.md,
 * "Round eleven"). Round three's case against short periods was a stream that
 * still held its buffers (cacache's writer queue: held buffers survive two young
 * collections, are promoted, and wait for a full one); no such stream is left on
 * the download path since round six.
 *
 * The collector is V8's `gc`, which exists only when the host process exposed
 * it: the CLI entry (bin/run.js) does, under the well-known symbol below. The
 * library never sets a V8 flag (issue 13), so an embedder's process without it
 * simply collects on V8's own schedule.
 */
type Collect = (options?: { type?: 'minor' | 'major' }) => void;

/** Where bin/run.js puts V8's `gc` (Symbol.for: the bundle and the entry share no module). */
const COLLECTOR_KEY = Symbol.for('yep-ext.collect-garbage');

/** Collect after this many bytes of transient buffers (measured: 4 MiB keeps a 68 MB download flat). */
const EVERY = 4 * 1024 * 1024;

/** The period for a download's socket reads (see above). */
export const DOWNLOAD_EVERY = 1024 * 1024;

/**
 * A counter of transient buffer bytes: call it with each chunk's length; it
 * runs a young-generation collection every `every` bytes (4 MiB unless told)
 * when a collector is present.
 */
export function bufferGarbageMeter(every = EVERY): (bytes: number) => void {
  const collect = (globalThis as Record<symbol, unknown>)[COLLECTOR_KEY];
  if (typeof collect !== 'function') return () => undefined;
  let since = 0;
  return (bytes: number): void => {
    since += bytes;
    if (since < every) return;
    since = 0;
    (collect as Collect)({ type: 'minor' });
  };
}
