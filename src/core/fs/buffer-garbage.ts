/**
 * Prompt collection of buffer garbage during a long transfer. Every socket read
 * (undici) and every stream chunk is a fresh buffer outside V8's heap, and V8
 * collects such buffers only once ~32 MiB of them have piled up: that pile was
 * most of the growth of the peak RSS during a download and while copying it
 * into the download cache (docs/performance.md, "Round three: memory"). A
 * young-generation collection every 4 MiB frees them at a cost of well under a
 * millisecond each (a full one cost ~1 s of CPU over a 200 MB install).
 *
 * Not more often: a buffer a stream still holds (cacache's writer queues a few)
 * survives two young collections and is promoted, and promoted buffers wait for
 * a full collection: every 2 MiB, the 200 MB install peaked as high as with no
 * collection at all (111 MiB); every 4 MiB, 85-88; every 8 MiB, ~89.
 *
 * The collector is V8's `gc`, which exists only when the host process exposed
 * it: the CLI entry (bin/run.js) does, under the well-known symbol below. The
 * library never sets a V8 flag (issue 13), so an embedder's process without it
 * simply collects on V8's own schedule.
 */
type Collect = (options?: { type?: 'minor' | 'major' }) => void;

/** Where bin/run.js puts V8's `gc` (Symbol.for: the bundle and the entry share no module). */
export const COLLECTOR_KEY = Symbol.for('yep-ext.collect-garbage');

/** Collect after this many bytes of transient buffers (measured: 4 MiB keeps a 68 MB download flat). */
const EVERY = 4 * 1024 * 1024;

/**
 * A counter of transient buffer bytes: call it with each chunk's length; it
 * runs a young-generation collection every 4 MiB when a collector is present.
 */
export function bufferGarbageMeter(): (bytes: number) => void {
  const collect = (globalThis as Record<symbol, unknown>)[COLLECTOR_KEY];
  if (typeof collect !== 'function') return () => undefined;
  let since = 0;
  return (bytes: number): void => {
    since += bytes;
    if (since < EVERY) return;
    since = 0;
    (collect as Collect)({ type: 'minor' });
  };
}
