/**
 * The static prompt an installed extension's capability server sends in its handshake,
 * compared with what doctor saw last time (store/mcp-record.ts) and graded as
 * `prompt_changes`. plugin.json only says `"prompt": true`: the words arrive from the
 * running server, so the grant cannot pin them, and a server can change what it adds to
 * every system prompt without any update of the package. This is how that is noticed.
 */
import type { Context } from '../context.js';
import type { Manifest } from '../package/manifest.js';
import { loadMcpRecord, saveMcpRecord } from '../store/mcp-record.js';
import { redactText } from '../text/redact.js';
import { sanitize } from '../text/sanitize.js';
import type { Report } from './report.js';

/** The first line that differs, old and new, each cut short: where to start reading. */
function firstChange(before: string, after: string): string {
  const a = before.split('\n');
  const b = after.split('\n');
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const line = (l: string | undefined) => (l === undefined ? '(no line)' : JSON.stringify(sanitize(l, { max: 120 })));
  return `line ${i + 1} was ${line(a[i])}, now ${line(b[i])}`;
}

/** Grade and record `text`, the static prompt the server sent now ('' for none). */
export async function checkPromptRecord(ctx: Context, report: Report, manifest: Manifest, text: string, secrets: readonly string[]): Promise<void> {
  const shown = redactText(text, secrets);
  const previous = loadMcpRecord(ctx.paths, manifest.name);
  const before = previous?.prompt;
  if (before === undefined) report.add('prompt_changes', 'pass', `first look: recorded the static prompt (${shown.length} characters)`);
  else if (before.text === shown) report.add('prompt_changes', 'pass', `the same static prompt as on ${before.seen_at}`);
  else {
    const since = `${before.seen_at}${before.version !== (manifest.version ?? null) ? ` (version ${before.version ?? 'none'} then, ${manifest.version ?? 'none'} now)` : ''}`;
    report.add(
      'prompt_changes',
      'warn',
      `the static prompt the server adds to every system prompt changed since ${since}: ${firstChange(before.text, shown)}; read it (\`yep-ext doctor ${manifest.name} --json\` has the check), and \`yep-ext disable ${manifest.name}\` if you did not expect it`,
    );
  }
  const seenAt = new Date(ctx.clock.now()).toISOString();
  try {
    await saveMcpRecord(ctx.paths, {
      format: 1,
      name: manifest.name,
      servers: previous?.servers ?? {},
      prompt: { seen_at: seenAt, version: manifest.version ?? null, text: shown },
    });
  } catch (e) {
    report.add('mcp_record', 'warn', `could not save the static prompt the server sent, so the next run cannot compare: ${(e as Error).message}`);
  }
}
