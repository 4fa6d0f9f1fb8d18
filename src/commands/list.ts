import { Flags } from '@oclif/core';
import { BaseCommand } from '../cli/base-command.js';
import { renderTable } from '../cli/table.js';
import { describeSource } from '../core/operations/install.js';
import { listExtensions, type ListedExtension } from '../core/operations/list.js';
import { sanitize } from '../core/sanitize.js';

export default class List extends BaseCommand {
  static override summary = 'List installed extensions with their version, state, source and problems.';
  static override examples = ['<%= config.bin %> list', '<%= config.bin %> list --json', '<%= config.bin %> list --no-verify'];
  static override flags = {
    verify: Flags.boolean({ default: true, allowNo: true, description: 'Re-hash crate and git packages to detect files changed since install.' }),
  };

  async run(): Promise<unknown> {
    const { flags } = await this.parse(List);
    const ctx = this.makeContext({ index: flags.index });
    const items = await listExtensions(ctx, { verify: flags.verify });
    if (!this.jsonEnabled()) this.log(renderList(items));
    return { extensions: items.map(toJson) };
  }
}

function toJson(e: ListedExtension) {
  const { manifest: _m, ...rest } = e;
  return { ...rest, version: e.version ?? null, enabled: e.enabled ?? null, source: e.source ?? null };
}

function renderList(items: ListedExtension[]): string {
  if (items.length === 0) return 'No extensions installed. Try `yep-ext search` or `yep-ext install <source>`.';
  return renderTable(
    ['name', 'version', 'enabled', 'source', 'config', 'problems'],
    items.map((e) => [
      sanitize(e.name),
      sanitize(e.version ?? '-'),
      e.enabled === undefined ? '?' : e.enabled ? 'yes' : 'no',
      e.source ? sanitize(describeSource(e.source)) : '(not in lock)',
      (e.config ?? []).map((f) => `${sanitize(f.key)}${f.secret ? ' (secret)' : ''}: ${f.set ? 'set' : f.source === 'default' ? 'default' : 'unset'}`).join('\n'),
      e.problems.length ? sanitize(e.problems.join('; ')) : '',
    ]),
  );
}
