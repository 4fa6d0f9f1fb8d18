/**
 * The one way people read what moves an extension: within its requirement,
 * `yep-ext update <name>`; a newer release outside it, "0.4.0 exists outside ^0.1:
 * `yep-ext install hello@^0.4`". `update`, `outdated` and `info` all print these,
 * from the one answer (core/operations/offer.ts). Pure.
 */
import type { NewerOutside } from '../core/operations/offer.js';
import { sanitize } from '../core/text/sanitize.js';

/** "0.4.0 exists outside ^0.1: `yep-ext install hello@^0.4`". */
export function outsideText(o: NewerOutside): string {
  return `${sanitize(o.version, { max: 40 })} exists outside ${sanitize(o.requirement, { max: 80 })}: \`yep-ext install ${sanitize(o.spec, { max: 200 })}\``;
}

/** "`yep-ext update hello`": the command that moves an extension within its requirement. */
export function updateCommand(name: string): string {
  return `\`yep-ext update ${sanitize(name)}\``;
}
