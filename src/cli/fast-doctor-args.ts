/**
 * The shapes of `yep-ext doctor` the oclif-free runner takes (fast-doctor.ts),
 * in a module of its own so that the early server start (doctor-early.ts)
 * accepts exactly the same ones without loading the runner.
 */
export interface FastDoctorArgs {
  target: string;
  json: boolean;
  noConfig: boolean;
  timeout?: string;
  quiet: boolean;
  verbose: boolean;
}

/** The arguments after `doctor` when each one is a shape we fully understand, else undefined. */
export function parseFastDoctorArgs(args: string[]): FastDoctorArgs | undefined {
  const out: Partial<FastDoctorArgs> & { json: boolean; noConfig: boolean; quiet: boolean; verbose: boolean } = {
    json: false,
    noConfig: false,
    quiet: false,
    verbose: false,
  };
  const seen = new Set<string>();
  const once = (key: string): boolean => !seen.has(key) && Boolean(seen.add(key));
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--json') {
      if (!once('json')) return undefined;
      out.json = true;
    } else if (a === '--no-config') {
      if (!once('no-config')) return undefined;
      out.noConfig = true;
    } else if (a === '-q' || a === '--quiet') {
      if (!once('quiet') || seen.has('verbose')) return undefined;
      out.quiet = true;
    } else if (a === '--verbose') {
      if (!once('verbose') || seen.has('quiet')) return undefined;
      out.verbose = true;
    } else if (a === '--timeout') {
      const value = args[i + 1];
      // A value that looks like a flag is oclif's to judge.
      if (!once('timeout') || value === undefined || value === '' || value.startsWith('-')) return undefined;
      out.timeout = value;
      i++;
    } else if (a !== '' && !a.startsWith('-') && out.target === undefined) {
      out.target = a;
    } else {
      return undefined;
    }
  }
  return out.target === undefined ? undefined : (out as FastDoctorArgs);
}
