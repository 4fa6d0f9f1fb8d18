/**
 * The one way people read what moves an extension: within its requirement,
 * `yep-ext update <name>`; a newer release outside it, "0.4.0 exists outside ^0.1:
 * `yep-ext install hello@^0.4`". `update`, `outdated` and `info` all print these,
 * from the one answer (core/operations/offer.ts). Pure.
 */
import type { NewerOutside } from '../core/operations/offer.js';
import { sanitize } from '../core/text/sanitize.js';

/**
 * "0.4.0 exists outside ^0.1: `yep-ext install hello@^0.4`". An exact pin (`hello@0.1.0`,
 * recorded as `0.1.0`) reads `=0.1.0`: a bare `0.1.0` is `^0.1.0` to a cargo user.
 */
export function outsideText(o: NewerOutside): string {
  const requirement = /^\d/.test(o.requirement) ? `=${o.requirement}` : o.requirement;
  return `${sanitize(o.version, { max: 40 })} exists outside ${sanitize(requirement, { max: 80 })}: \`yep-ext install ${sanitize(o.spec, { max: 200 })}\``;
}

/** "`yep-ext update hello`": the command that moves an extension within its requirement. */
export function updateCommand(name: string): string {
  return `\`yep-ext update ${sanitize(name)}\``;
}
