/**
 * ScaffoldSpec -> the package as a map of files. Pure: no filesystem, no clock,
 * so the same request always renders the same bytes (tests and the write step
 * both rely on it).
 */
import { renderManifestText } from './manifest.js';
import { renderServerSource } from './facets.js';
import { PYTHON_SERVER } from './python.js';
import { renderReadme, renderSkill } from './readme.js';
import { RUST_SERVER, renderCargoToml } from './rust.js';
import { TYPESCRIPT_SERVER, renderPackageJson, renderTsconfig, renderTypescriptLauncher } from './typescript.js';
import type { ScaffoldSpec } from './request.js';

export interface ScaffoldFile {
  content: string;
  /** Permission bits, applied exactly (the umask does not narrow them). */
  mode: number;
}

/** Relative path (with `/`) -> file. Directories are implied by the paths. */
export type ScaffoldFiles = Record<string, ScaffoldFile>;

const EXECUTABLE_MODE = 0o755;
const FILE_MODE = 0o644;

const file = (content: string): ScaffoldFile => ({ content, mode: FILE_MODE });

/** Every file of the package. */
export function renderScaffold(spec: ScaffoldSpec): ScaffoldFiles {
  const files: ScaffoldFiles = {
    'plugin.json': file(renderManifestText(spec)),
    'README.md': file(renderReadme(spec)),
  };
  if (spec.language === 'rust') {
    files['Cargo.toml'] = file(renderCargoToml(spec));
    files['src/main.rs'] = file(renderServerSource(spec, RUST_SERVER));
    files['.gitignore'] = file('/target\n');
    // bin/ must exist for the build step's `cp … bin/`; the binary itself is built, not generated.
    files['bin/.gitkeep'] = file('');
  } else if (spec.language === 'typescript') {
    files['package.json'] = file(renderPackageJson(spec));
    files['tsconfig.json'] = file(renderTsconfig());
    files['src/server.ts'] = file(renderServerSource(spec, TYPESCRIPT_SERVER));
    files['.gitignore'] = file('node_modules/\ndist/\n');
    files[`bin/${spec.name}`] = { content: renderTypescriptLauncher(spec), mode: EXECUTABLE_MODE };
  } else {
    files[`bin/${spec.name}`] = { content: renderServerSource(spec, PYTHON_SERVER), mode: EXECUTABLE_MODE };
  }
  if (spec.skills) files[`skills/${spec.name}/SKILL.md`] = file(renderSkill(spec));
  return files;
}
