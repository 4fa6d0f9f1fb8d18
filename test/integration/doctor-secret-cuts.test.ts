/**
 * Redaction before every cut, through doctor: a server holding a secret shows it where
 * each of doctor's cuts falls (the not-JSON snippet, the stderr tail, the
 * unknown-method excerpt, an unterminated last line, a long error message,
 * a descendant's command line). Neither the report (`--json`) nor its human
 * rendering may hold any 6-character piece of the secret.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderDoctorReport } from '../../src/cli/render-doctor.js';
import { runDoctor, type DoctorOptions, type DoctorReport } from '../../src/core/doctor/doctor.js';
import { YepClient } from '../../src/core/yep/client.js';
import { makePackage, SERVER_FIXTURES } from '../helpers/ext-package.js';
import { makeTempHome, type TempHome } from '../helpers/home.js';
import { secretFragments } from '../helpers/secret-fragments.js';

const SECRET = 'Zq7-Kx93-Jw5R-Vb28-Tn6Q-Pm41-Hd3L-Yc8U';
const FAST = { timeoutMs: 3000, probeTimeoutMs: 1000, graceMs: 300 };
const CONFIG = { config_schema: { type: 'object', properties: { token: { type: 'string', secret: true, env: 'FIXTURE_TOKEN' } }, required: ['token'] } };

let home: TempHome;
let n = 0;
beforeAll(() => {
  home = makeTempHome('yep-secret-cuts-');
  mkdirSync(join(home.root, 'pkgs'), { recursive: true });
});
afterAll(() => home.cleanup());

async function doctorOf(args: string[], options: Partial<DoctorOptions> = {}): Promise<{ report: DoctorReport; shown: string }> {
  const dir = makePackage(join(home.root, 'pkgs'), `leaky-${++n}`, { server: 'leaky.sh', args, yolop: CONFIG });
  const report = await runDoctor(home.ctx(), {
    target: { kind: 'path', dir },
    workspaceRoot: home.root,
    ...FAST,
    loadConfig: async () => ({ values: {}, secrets: { token: SECRET } }),
    ...options,
  });
  return { report, shown: `${JSON.stringify(report)}\n${renderDoctorReport(report)}` };
}

const detail = (r: DoctorReport, name: string): string => r.checks.find((c) => c.name === name)?.detail ?? '(no such check)';

describe('doctor never shows a piece of a secret at a cut', () => {
  it('a long non-JSON stdout line (the issue): the snippet is redacted before its 200-character cut', async () => {
    const { report, shown } = await doctorOf(['--stdout-banner']);
    expect(report.problems.join('\n')).toMatch(/not JSON: b{20}/);
    expect(detail(report, 'messages')).toContain('not JSON');
    expect(secretFragments(shown, SECRET)).toEqual([]);
  });

  it('the stderr tail starting inside the secret', async () => {
    // 4096 bytes kept: the tail starts 12 characters before the secret ends.
    const { report, shown } = await doctorOf(['--stderr-cut', String(4096 - 12)], { call: { tool: 'nope', args: {} } });
    expect(report.ok).toBe(false);
    expect(report.stderr_tail).toMatch(/^…\(\d+ earlier bytes dropped\)\n/);
    expect(secretFragments(shown, SECRET)).toEqual([]);
  });

  it('the excerpt of a success answer to an unknown method (80 characters)', async () => {
    const { report, shown } = await doctorOf(['--unknown-secret']);
    expect(report.checks.find((c) => c.name === 'unknown_method')?.status).toBe('warn');
    expect(detail(report, 'unknown_method')).toContain('zzzz');
    expect(secretFragments(shown, SECRET)).toEqual([]);
  });

  it('an unterminated last line at EOF', async () => {
    const { report, shown } = await doctorOf(['--incomplete']);
    expect(report.problems.join('\n')).toContain('incomplete line at end of output');
    expect(secretFragments(shown, SECRET)).toEqual([]);
  });

  it('an error cause longer than the rendered detail (--call)', async () => {
    const { report, shown } = await doctorOf([], { call: { tool: 'echo', args: {} } });
    expect(detail(report, 'call')).toContain('eeee');
    expect(secretFragments(shown, SECRET)).toEqual([]);
  });

  it("a leftover process's command line (80 characters) in the processes check", async () => {
    const { report, shown } = await doctorOf(['--child-argv']);
    expect(report.checks.find((c) => c.name === 'processes')?.status).toBe('fail');
    expect(detail(report, 'processes')).toMatch(/sleep 300 p{20}/);
    expect(secretFragments(shown, SECRET)).toEqual([]);
  });

  it('the client alone: problems and the stderr tail it reports hold no piece of its secrets', async () => {
    const c = YepClient.start(
      {
        command: '/bin/sh',
        args: [join(SERVER_FIXTURES, 'leaky.sh'), '--stdout-banner', '--stderr-cut', '500'],
        packageDir: home.root,
        workspaceRoot: home.root,
        injectedEnv: { FIXTURE_TOKEN: SECRET },
      },
      { secrets: [SECRET], stderrTailBytes: 510 },
    );
    await c.initialize();
    await c.stop({ graceMs: 300 });
    expect(c.problems.length).toBeGreaterThan(0);
    expect(secretFragments(JSON.stringify(c.problems) + c.stderrTail(), SECRET)).toEqual([]);
  });
});
