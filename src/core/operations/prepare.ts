/**
 * The shared middle of install, update and frozen install: a fetched tree in
 * staging becomes a PreparedPackage (manifest read by the host's rules, content
 * hash, grant), and a PreparedPackage is committed to the store and lock by the
 * crash-safe transaction. Only this module turns fetched bytes into store state.
 */
import { symlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Context } from '../context.js';
import { checkpoint } from '../store/checkpoint.js';
import { inspectServerCommand, type CommandInspection } from '../doctor/inspect-command.js';
import { contentHash } from '../package/content-hash.js';
import { grantOf, summarizeGrant, type GrantSummary } from '../package/grants.js';
import type { LockEntry } from '../store/lockfile.js';
import { loadManifest, type Manifest } from '../package/manifest.js';
import { assertValidName } from '../package/names.js';
import type { FetchResult } from '../sources/types.js';
import { placePackage } from '../store/transaction.js';

export interface PreparedPackage {
  fetched: FetchResult;
  manifest: Manifest;
  name: string;
  content_hash: string;
  grant: GrantSummary;
  command: CommandInspection;
  stage: string;
}

export async function preparePackage(ctx: Context, stage: string, fetch: () => Promise<FetchResult>): Promise<PreparedPackage> {
  const fetched = await fetch();
  const manifest = await loadManifest(fetched.dir);
  const name = assertValidName(manifest.name, 'manifest name');
  // The host hashes the unpacked tree before a prebuilt binary is added (host-compat §4).
  const content_hash = await contentHash(fetched.dir);
  await checkpoint(ctx.env, 'install:after-fetch');
  const inspect = () => inspectServerCommand(fetched.dir, manifest.yolop.capabilityServer.command, ctx.env.PATH ?? '');
  let command = await inspect();
  // A prebuilt server binary, only into a tree we own (never into a user's path install).
  if (!command.ok && manifest.yolop.capabilityServer.binaries && fetched.source.type !== 'path') {
    const { provisionBinary } = await import('../binary/provision-binary.js');
    const outcome = await provisionBinary(ctx, fetched.dir, manifest);
    if (outcome.sha256) fetched.source = { ...fetched.source, binary_sha256: outcome.sha256 };
    if (outcome.note) fetched.notes = [...(fetched.notes ?? []), outcome.note];
    command = await inspect();
  }
  return {
    fetched,
    manifest,
    name,
    content_hash,
    grant: summarizeGrant(grantOf(manifest)),
    command,
    stage,
  };
}

/** The lock entry a prepared package gets. */
export function lockEntryFor(p: PreparedPackage): LockEntry {
  return {
    name: p.name,
    content_hash: p.content_hash,
    ...(p.manifest.version !== undefined ? { version: p.manifest.version } : {}),
    grant: p.grant.fingerprint,
    source: p.fetched.source,
  };
}

/** Place a prepared package at <store>/<name> and pin it. Caller holds the installer lock. */
export async function commitPackage(ctx: Context, p: PreparedPackage, entry: LockEntry = lockEntryFor(p)): Promise<void> {
  let tree = p.fetched.dir;
  if (p.fetched.source.type === 'path') {
    tree = join(p.stage, 'link');
    await symlink(p.fetched.dir, tree, 'dir');
  }
  // The approved grant is saved by the transaction, after the lock commit.
  await placePackage(ctx, p.stage, entry, tree, p.grant.grant);
}
