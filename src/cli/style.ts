/**
 * Minimal terminal styling: colour only on a TTY, and never with NO_COLOR, TERM=dumb or
 * FORCE_COLOR=0 (or false), which node, npm and chalk also read as "no colour": each
 * stream of the run's io says whether it takes colour (cli-io.ts).
 */

/** A stream text is styled for. */
export interface StyleTarget {
  readonly color: boolean;
}

let stdoutTarget: StyleTarget = { color: false };

/** The stream the style functions colour for when none is named: the run's stdout (runCli sets it). */
export function setStdoutStyle(target: StyleTarget): void {
  stdoutTarget = target;
}

function wrap(open: number, close: number) {
  return (text: string, stream: StyleTarget = stdoutTarget): string => (stream.color ? `\u001b[${open}m${text}\u001b[${close}m` : text);
}

export const bold = wrap(1, 22);
export const dim = wrap(2, 22);
export const red = wrap(31, 39);
export const green = wrap(32, 39);
export const yellow = wrap(33, 39);
export const blue = wrap(34, 39);
export const cyan = wrap(36, 39);
