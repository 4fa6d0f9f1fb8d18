/**
 * SEAM(config): where `yep-ext doctor` gets an installed extension's configured
 * values and secrets, so the server runs with what the host would give it.
 *
 * TODO(lead): connect to the settings/secrets modules when they land:
 *   values  <- settings.toml, the `[[capabilities]]` entry with ref "ext:<name>" (minus ref/enabled/append)
 *   secrets <- connections.toml, table ["ext:<name>"]
 * Until then doctor injects nothing but the caller's own environment (which the
 * server inherits, so `FOO_TOKEN=... yep-ext doctor ./pkg` works for authors).
 */
import type { Context } from './context.js';
import type { DoctorConfigLoader } from './doctor.js';

/** The loader the CLI hands to runDoctor; undefined while no config store is wired. */
export function doctorConfigLoader(_ctx: Context): DoctorConfigLoader | undefined {
  return undefined;
}
