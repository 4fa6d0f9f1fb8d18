/**
 * This host as a Rust target triple, and the pieces of a triple that
 * cargo-binstall templates and `cfg(...)` overrides ask about (os, arch, env,
 * vendor, family). Pure except for the musl probe, which is injectable.
 */

/**
 * The libc this Node runs on, asked once per process: it cannot change while the process
 * runs, and the report that tells it gathers the whole process's state (its handles, heap
 * and libraries) each time, for every package an install provisions.
 */
let musl: boolean | undefined;

function isMusl(): boolean {
  if (musl === undefined) {
    // glibcVersionRuntime is absent on musl (Alpine) builds of Node.
    const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header;
    musl = header !== undefined && header.glibcVersionRuntime === undefined;
  }
  return musl;
}

/** This host as a Rust target triple, or undefined when no prebuilt binary can fit it. */
export function hostTarget(platform: NodeJS.Platform = process.platform, arch: string = process.arch, musl: () => boolean = isMusl): string | undefined {
  const cpu = ({ x64: 'x86_64', arm64: 'aarch64' } as Record<string, string>)[arch];
  if (!cpu) return undefined;
  switch (platform) {
    case 'linux':
      return `${cpu}-unknown-linux-${musl() ? 'musl' : 'gnu'}`;
    case 'darwin':
      return `${cpu}-apple-darwin`;
    case 'win32':
      return `${cpu}-pc-windows-msvc`;
    default:
      return undefined;
  }
}

export interface TargetInfo {
  triple: string;
  arch: string;
  vendor: string;
  /** rustc's target_os: linux, macos, windows, freebsd... */
  os: string;
  /** rustc's target_env: gnu, musl, msvc, or "" (apple). */
  env: string;
  /** unix or windows. */
  family: string;
  /** `.exe` on Windows, "" elsewhere. */
  binaryExt: string;
}

/** Split a triple (arch-vendor-os[-env]) into what binstall templates and cfg() use. */
export function targetInfo(triple: string): TargetInfo {
  const [arch = '', vendor = '', sys = '', ...rest] = triple.split('-');
  const envPart = rest.join('-');
  const os = sys === 'darwin' ? 'macos' : sys;
  const windows = os === 'windows';
  return { triple, arch, vendor, os, env: envPart, family: windows ? 'windows' : 'unix', binaryExt: windows ? '.exe' : '' };
}
