/** Human text for `new` (pure: data in, text out). */
import type { NewResult } from '../scaffold/run-new.js';
import { bold, type StyleTarget } from './style.js';

const LANGUAGE_TEXT = {
  typescript: 'TypeScript (compiled by tsc, no runtime dependencies)',
  python: 'Python 3 (standard library, no build)',
  rust: 'Rust (serde_json only)',
} as const;

function facets(r: NewResult): string {
  const s = r.spec;
  const parts: string[] = [];
  if (s.tools.length) parts.push(`tools ${s.tools.join(', ')}`);
  if (s.hooks.length) parts.push(`hooks ${s.hooks.map((h) => `${h.event} ${h.glob}`).join(', ')}`);
  if (s.commands.length) parts.push(`commands ${s.commands.map((c) => `/${s.name}:${c}`).join(', ')}`);
  if (s.prompt !== undefined) parts.push('prompt');
  if (s.dynamicPrompt) parts.push('dynamic prompt');
  if (s.status) parts.push('status');
  if (s.skills) parts.push('skills');
  if (s.config.length) parts.push(`config ${s.config.map((f) => (f.secret ? `${f.key} (secret, $${f.env})` : f.key)).join(', ')}`);
  return parts.join('; ');
}

function describe(r: NewResult, path: string): string {
  if (path === 'plugin.json') return 'manifest: what the extension contributes';
  if (path === 'README.md') return 'what to edit, how to build and test';
  if (path === r.server) return r.handlers.length ? `the server: fill in ${r.handlers.join(', ')}` : 'the server';
  if (path === 'Cargo.toml') return 'crate (serde_json only)';
  if (path === 'package.json') return 'the build: npm run build (tsc)';
  if (path === 'tsconfig.json') return 'compiler settings: src/ -> dist/';
  if (path === `bin/${r.name}` && r.language === 'typescript') return 'the launcher yolop runs: it starts dist/server.js';
  if (path === '.gitignore') return '';
  if (path.startsWith('skills/')) return 'a starter skill';
  if (path === 'bin/.gitkeep') return `bin/${r.name} goes here once built`;
  return '';
}

export function renderNew(r: NewResult, stream?: StyleTarget, quiet = false): string {
  // -q: the result line only (no file list, notes or next steps), as cargo -q.
  if (quiet) return `Created ${r.path}: ${r.name}, ${LANGUAGE_TEXT[r.language]}`;
  const width = Math.max(...r.files.map((f) => f.path.length));
  const lines = [
    `Created ${r.path}: ${r.name}, ${LANGUAGE_TEXT[r.language]}`,
    `  ${facets(r)}`,
    '',
    ...r.files.map((f) => `  ${f.path.padEnd(width)}  ${f.mode}  ${describe(r, f.path)}`.trimEnd()),
  ];
  if (r.notes.length) lines.push('', ...r.notes.map((n) => `Note: ${n}`));
  if (r.build) lines.push('', bold(`Build it (in ${r.path}), after every change:`, stream), `  ${r.build}`, `  It needs ${r.buildNeeds ?? 'its toolchain'}`);
  lines.push('', bold('Next:', stream), ...r.next.map((c) => `  ${c}`));
  return lines.join('\n');
}
