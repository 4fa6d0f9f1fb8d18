/**
 * Where this host's prebuilt server binary comes from, decided from the
 * verified tree alone (no network): the yolop `binaries` template first (the
 * host's form), else cargo-binstall's `pkg-url`; the expected digest from the
 * crate's `capabilityServer.binary_sha256` when present (then nothing else
 * counts), and the publisher key from `[package.metadata.binstall.signing]`.
 * Pure.
 */
import type { Manifest } from '../package/manifest.js';
import { binstallFor, fmtSuffixes, guessFmt, SUPPORTED_FMTS, type CargoFacts, type PkgFmt, type SigningMeta } from './binstall-meta.js';
import type { Pick } from './extract-artifact.js';
import { targetInfo } from './target.js';
import { renderTemplate, templateKeys, TemplateError } from './template.js';

export interface ArtifactPlan {
  /** Which metadata named the URL. */
  origin: 'yolop' | 'binstall';
  target: string;
  /** Candidate URLs in order; the first the release host has is used. */
  urls: string[];
  /** Format per candidate URL (same length as urls). */
  fmts: PkgFmt[];
  pick: Pick;
  /** In-crate digest for this target: the only digest that counts when present. */
  expected?: string;
  signing?: SigningMeta;
  /** Template of the signature URL (`{ url }` = the artifact URL). */
  signatureUrl?: (artifactUrl: string) => string;
}

export type ArtifactDecision =
  | { kind: 'artifact'; plan: ArtifactPlan }
  /** No artifact is declared for this target: build from source may step in. */
  | { kind: 'none'; reason: string }
  /** Declared, but unusable as written: a note, and no build (the crate meant a prebuilt). */
  | { kind: 'unusable'; reason: string };

export interface ArtifactInput {
  manifest: Manifest;
  cargo?: CargoFacts;
  target: string;
}

/** Fill the host's `{name}`, `{version}`, `{target}` markers (exact text, as the host does). */
export function binaryUrl(template: string, values: { name: string; version: string; target: string }): string {
  return template.replaceAll('{name}', values.name).replaceAll('{version}', values.version).replaceAll('{target}', values.target);
}

function fmtOfUrl(url: string): PkgFmt {
  return guessFmt(url) ?? 'bin';
}

export function decideArtifact(input: ArtifactInput): ArtifactDecision {
  const { manifest, cargo, target } = input;
  const server = manifest.yolop.capabilityServer;
  const info = targetInfo(target);
  const bin = server.command;
  const digests = server.binary_sha256;
  const binstall = cargo?.binstall ? binstallFor(cargo.binstall, target) : undefined;
  const signing = binstall?.signing;
  const expected = digests?.[target];
  if (digests !== undefined && expected === undefined) {
    return { kind: 'none', reason: `the crate lists artifact digests, but none for ${target}` };
  }
  const signatureUrl = signing ? (url: string) => renderTemplate(signing.file ?? '{ url }.sig', { url }) : undefined;
  const common = { target, ...(expected ? { expected } : {}), ...(signing ? { signing } : {}), ...(signatureUrl ? { signatureUrl } : {}) };

  if (server.binaries) {
    const url = binaryUrl(server.binaries, { name: manifest.name, version: manifest.version ?? '', target });
    return { kind: 'artifact', plan: { origin: 'yolop', urls: [url], fmts: [fmtOfUrl(url)], pick: { fileName: bin }, ...common } };
  }
  if (!binstall?.pkgUrl) {
    return { kind: 'none', reason: cargo?.binstall ? `the crate's binstall metadata has no pkg-url for ${target}` : 'the crate names no prebuilt artifact' };
  }
  if (cargo && cargo.problems.length > 0) return { kind: 'unusable', reason: `the crate's binstall metadata is malformed: ${cargo.problems.join('; ')}` };
  try {
    const keys = templateKeys(binstall.pkgUrl);
    const hasSuffixKey = keys.some((k) => k === 'archive-suffix' || k === 'archive-format' || k === 'format');
    const fmt = binstall.pkgFmt ?? (hasSuffixKey ? 'tgz' : guessFmt(binstall.pkgUrl));
    if (!fmt) return { kind: 'unusable', reason: `pkg-fmt is not set and cannot be guessed from pkg-url ${binstall.pkgUrl}` };
    if (!SUPPORTED_FMTS.includes(fmt)) return { kind: 'unusable', reason: `the artifact format ${fmt} is not one yep-ext unpacks (tgz, tar, zip or bin)` };
    const windows = info.family === 'windows';
    const values = (suffix: string): Record<string, string | undefined> => ({
      name: cargo?.crateName ?? manifest.name,
      version: cargo?.version ?? manifest.version,
      repo: cargo?.repository?.replace(/\/+$/, ''),
      bin,
      target,
      'archive-suffix': suffix,
      'archive-format': suffix.replace(/^\./, ''),
      format: suffix.replace(/^\./, ''),
      'binary-ext': info.binaryExt,
      'target-family': target.split('-')[2],
      'os-name': info.os,
      'target-arch': info.arch,
      'target-libc': info.env,
      'target-vendor': info.vendor,
    });
    const suffixes = hasSuffixKey ? fmtSuffixes(fmt, windows) : [''];
    const urls = [...new Set(suffixes.map((s) => renderTemplate(binstall.pkgUrl as string, values(s))))];
    let pick: Pick = { fileName: `${bin}${info.binaryExt}` };
    if (binstall.binDir && fmt !== 'bin') {
      const binValues = { ...values(suffixes[0] ?? ''), format: info.binaryExt };
      pick = { path: renderTemplate(binstall.binDir, binValues) };
    }
    return { kind: 'artifact', plan: { origin: 'binstall', urls, fmts: urls.map(() => fmt), pick, ...common } };
  } catch (e) {
    if (e instanceof TemplateError) return { kind: 'unusable', reason: `the crate's binstall metadata: ${e.message}` };
    throw e;
  }
}
