/** Doctor's defaults that its command line names too (the command table loads this, not doctor). */

/** How long doctor waits for the handshake, as yolop does. */
export const DEFAULT_HANDSHAKE_TIMEOUT_MS = 20_000;
