/**
 * Prompt collection of buffer garbage during a long transfer. Every socket read
 * (undici) and every stream chunk is a fresh buffer outside V8's heap, and V8
 * collects such buffers only once tens of MiB of them have piled up: that pile
 * is most of the growth of the peak RSS during a long transfer. A
 * young-generation collection every few MiB frees them cheaply (a full
 * collection would cost far more CPU over a large install).
 *
 * 4 MiB by default. A download collects every 1 MiB (DOWNLOAD_EVERY): its socket
 * reads are all it makes, and nothing holds them once copied into the hash batch,
 * so a shorter period frees them sooner at no measurable cost, where 4 MiB lets
 * freed-but-unswept reads pile up (the 200 MB install's peak RSS, on Node 24
 * above all). A shorter period hurts only a stream that still holds its buffers
 * (held buffers survive two young collections, are promoted and wait for a full
 * one); keep such streams off the download path.
 *
 * The collector is V8's `gc`, which exists only when the host process exposed
 * it: the CLI entry (bin/run.js) does, under the well-known symbol below. The
 * library never sets a V8 flag, so an embedder's process without it
 * simply collects on V8's own schedule.
 */
type Collect = (options?: { type?: 'minor' | 'major' }) => void;

/** Where bin/run.js puts V8's `gc` (Symbol.for: the bundle and the entry share no module). */
const COLLECTOR_KEY = Symbol.for('yep-ext.collect-garbage');

/** Collect after this many bytes of transient buffers (enough to keep a long transfer's peak RSS flat). */
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
