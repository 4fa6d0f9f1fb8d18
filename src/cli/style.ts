/**
 * Minimal terminal styling: colour only on a TTY, and never with NO_COLOR, TERM=dumb or
 * FORCE_COLOR=0 (or false), which node, npm and chalk also read as "no colour".
 */
const enabled = (stream: NodeJS.WriteStream): boolean =>
  Boolean(stream.isTTY) &&
  !('NO_COLOR' in process.env && process.env.NO_COLOR !== '') &&
  process.env.TERM !== 'dumb' &&
  !['0', 'false'].includes(process.env.FORCE_COLOR ?? '');

function wrap(open: number, close: number) {
  return (text: string, stream: NodeJS.WriteStream = process.stdout): string => (enabled(stream) ? `\u001b[${open}m${text}\u001b[${close}m` : text);
}

export const bold = wrap(1, 22);
export const dim = wrap(2, 22);
export const red = wrap(31, 39);
export const green = wrap(32, 39);
export const yellow = wrap(33, 39);
export const cyan = wrap(36, 39);
