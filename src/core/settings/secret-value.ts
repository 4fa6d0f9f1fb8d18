/**
 * A credential in transit. Printing, logging, JSON-encoding or inspecting it
 * shows `[redacted]`; only reveal() yields the value, at the one place it is
 * written (the secret store) or injected (a server's environment).
 */
const INSPECT = Symbol.for('nodejs.util.inspect.custom');
const REDACTED = '[redacted]';

export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return REDACTED;
  }

  toJSON(): string {
    return REDACTED;
  }

  [Symbol.toPrimitive](): string {
    return REDACTED;
  }

  [INSPECT](): string {
    return `Secret(${REDACTED})`;
  }
}

/** The plain string of a Secret or a string. */
export function revealSecret(value: Secret | string): string {
  return typeof value === 'string' ? value : value.reveal();
}
