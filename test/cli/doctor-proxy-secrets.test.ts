/**
 * What doctor shows from a server (the stderr tail, the MCP server's last stderr line,
 * the `--json` details) never carries the credentials of the proxy variables the server
 * inherits, in any form the server may echo them: a URL with a user only, with
 * user:password, percent-encoded, written without a scheme (curl and yep-ext read
 * `user:pass@host` as http), or the decoded password alone; nor what is left of any
 * URL's credential where the tail was cut in the middle of it. The proxies point at a closed loopback port; nothing is sent.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makePackage } from '../helpers/ext-package.js';
import { makeTempHome, runCli, type TempHome } from '../helpers/home.js';

// Each canary is a credential in one form; no piece of 4 characters or more may be shown.
const USER_ONLY = 'Zq7UoTk4Vx';
const PASSWORD = 'Pw9Qx2Zk7J';
const ENCODED_RAW = 'Zk%40Qe%3A5qW'; // decodes to Zk@Qe:5qW
const ENCODED_DECODED = 'Zk@Qe:5qW';
const SCHEMELESS = 'Ns3ZqXv8Kw';
const CUT = 'Ct8WqZj4XvRm';
const CANARIES = [USER_ONLY, PASSWORD, ENCODED_RAW, ENCODED_DECODED, SCHEMELESS, CUT];

const PROXY_ENV = {
  HTTP_PROXY: `http://${USER_ONLY}@127.0.0.1:9`,
  HTTPS_PROXY: `http://alice:${PASSWORD}@127.0.0.1:9`,
  ALL_PROXY: `http://bob:${ENCODED_RAW}@127.0.0.1:9`,
  https_proxy: `carol:${SCHEMELESS}@127.0.0.1:9`,
};

/**
 * A server that writes one URL placed so that the last 4096 bytes of its stderr (the
 * tail doctor keeps) begin inside that URL's password, then its proxy variables the way
 * servers log their configuration, then the decoded password, and exits 3.
 */
const ECHO_SERVER = `
const e = process.env;
const rest =
  'proxy config: HTTP_PROXY=' + e.HTTP_PROXY + ' HTTPS_PROXY=' + e.HTTPS_PROXY + ' ALL_PROXY=' + e.ALL_PROXY + ' https_proxy=' + e.https_proxy + '\\n' +
  'logging in to the proxy as bob with ' + decodeURIComponent(${JSON.stringify(ENCODED_RAW)}) + '\\n';
const url = 'upstream via http://dave:' + ${JSON.stringify(CUT)} + '@10.0.0.1:8080\\n';
const cutAt = url.indexOf(${JSON.stringify(CUT)}) + 5;
const pad = 4096 - (url.length - cutAt) - rest.length - 1;
process.stderr.write(url + 'x'.repeat(pad) + '\\n' + rest, () => process.exit(3));
`;

const PIECE = 4;
/** Every substring of a canary of PIECE characters or more that appears in `text`. */
function leaks(text: string): string[] {
  const found = new Set<string>();
  for (const c of CANARIES)
    for (let i = 0; i + PIECE <= c.length; i++) {
      const piece = c.slice(i, i + PIECE);
      if (text.includes(piece)) found.add(piece);
    }
  return [...found];
}

let home: TempHome;
let dir: string;
beforeAll(() => {
  home = makeTempHome('yep-doctor-proxy-');
  const script = join(home.root, 'echo-server.cjs');
  writeFileSync(script, ECHO_SERVER);
  dir = makePackage(join(home.root, 'src'), 'echoes', {
    yolop: { mcpServers: { local: { type: 'stdio', command: process.execPath, args: [script] } } },
  });
  // The capability server is the same echo script.
  writeFileSync(join(dir, 'bin', 'echoes'), `#!${process.execPath}\n${readFileSync(script, 'utf8')}`);
  mkdirSync(join(home.root, 'ws'), { recursive: true });
});
afterAll(() => home.cleanup());

describe('doctor never shows the proxy credentials a server echoes', () => {
  it.each([
    ['plain', []],
    ['--json', ['--json']],
    ['--verbose', ['--verbose']],
  ])('%s: the stderr tail, the MCP check and every detail are redacted', async (_mode, flags) => {
    const r = await runCli(['doctor', dir, ...flags], { env: { ...home.env, ...PROXY_ENV }, cwd: join(home.root, 'ws') });
    expect(r.code, r.stdout + r.stderr).toBe(9);
    const shown = r.stdout + r.stderr;
    // The server did echo them (the report shows where they were), and nothing of them is left.
    expect(shown).toContain('proxy config');
    expect(shown).toContain('logging in to the proxy');
    expect(leaks(shown)).toEqual([]);
  });
});
