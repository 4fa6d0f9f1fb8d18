/**
 * A credential in a URL never reaches the output, through the built CLI: a canary
 * token in a proxy URL (user only, the form that leaked through git), in an index,
 * a git mirror or a git URL, for HTTP and git alike, with --json, --verbose and
 * YEP_EXT_DEBUG=1 (the cause's stack). And a proxy URL neither client can use is a
 * configuration error naming its variable (exit 2), for HTTP and git, before anything
 * is sent or created. Nothing here reaches the network: the hosts are `.test` names a
 * refused proxy on port 1 never resolves.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';

const CANARY = 'ghp_Cnry5Tok9Zq2Wm';
const homes: TempHome[] = [];
afterAll(() => {
  for (const h of homes) h.cleanup();
});

function home(): TempHome {
  const h = makeTempHome('yep-urlsecret-');
  homes.push(h);
  return h;
}

const GIT_URL = 'https://git.example.test/acme/ext.git';

/** A package contributing an MCP server over HTTP: doctor's probe of it is a road that sends. */
function mcpHttpPackage(): string {
  const dir = join(home().root, 'mcp-http');
  mkdirSync(join(dir, 'bin'), { recursive: true });
  // It leaves a mark once it is sent anything (doctor's initialize): a refusal must come before that.
  writeFileSync(join(dir, 'bin', 'srv'), '#!/bin/sh\nread line\ntouch "$0.spoken"\nexec cat >/dev/null\n', { mode: 0o755 });
  const manifest = {
    name: 'mcp-http',
    version: '0.1.0',
    yolop: {
      capabilityServer: { command: 'srv' },
      tools: [{ name: 't', description: 'd' }],
      mcpServers: { h: { type: 'http', url: 'https://mcp.example.test/mcp' } },
    },
  };
  writeFileSync(join(dir, 'plugin.json'), JSON.stringify(manifest));
  return dir;
}
const HTTP_ENV = { YEP_EXT_INDEX: 'https://index.example.test/', YEP_EXT_HTTP_RETRIES: '0' };

/** Every way a run can show text: plain, --json, --verbose, and the debug cause. */
const MODES: Array<[string, string[], Record<string, string>]> = [
  ['plain', [], {}],
  ['--json', ['--json'], {}],
  ['--verbose with YEP_EXT_DEBUG=1', ['--verbose'], { YEP_EXT_DEBUG: '1' }],
];

describe('a canary token in a URL never reaches stdout, stderr or --json', () => {
  it.each(MODES)('git through a proxy written http://TOKEN@host (%s)', async (_mode, flags, extra) => {
    const h = home();
    const r = await runCli(['install', GIT_URL, ...flags], { env: { ...h.env, HTTPS_PROXY: `http://${CANARY}@127.0.0.1:1`, ...extra } });
    expect(r.code, r.stderr).toBe(6);
    expect(r.stdout + r.stderr).not.toContain(CANARY);
    // What git said is still there, its userinfo redacted.
    expect(r.stdout + r.stderr).toContain('http://[redacted]@127.0.0.1:1');
    if (flags.includes('--json')) {
      expect(jsonOf(r).error.details.git).toContain('[redacted]@127.0.0.1:1');
      // It is the proxy that asked for a password, not the repository.
      expect(jsonOf(r).error.message).toMatch(/the proxy asked for credentials/);
    }
    expect(existsSync(h.configDir)).toBe(false);
  });

  it.each(MODES)('HTTP through a proxy written http://TOKEN@host (%s)', async (_mode, flags, extra) => {
    const h = home();
    const r = await runCli(['install', 'hello', ...flags], { env: { ...h.env, ...HTTP_ENV, HTTPS_PROXY: `http://${CANARY}@127.0.0.1:1`, ...extra } });
    expect(r.code, r.stderr).toBe(6);
    expect(r.stdout + r.stderr).not.toContain(CANARY);
  });

  it.each([
    ['an index URL with a user', ['install', 'hello', '--json'], { YEP_EXT_INDEX: `https://${CANARY}@index.example.test/` }],
    ['an --index URL with user:password', ['install', 'hello', '--index', `https://me:${CANARY}@index.example.test/`, '--json'], {}],
    ['a git mirror URL with a user', ['install', GIT_URL, '--json'], { YEP_EXT_GIT_MIRROR: `https://${CANARY}@mirror.example.test/git/` }],
    ['a git URL with a user', ['install', `https://${CANARY}@git.example.test/acme/ext.git`, '--json'], {}],
    ['a git URL with a percent-encoded password', ['install', `https://me:${CANARY}%40x@git.example.test/acme/ext.git`, '--json'], {}],
    [
      "git's scp-like form with a password (read as a name: the name is not quoted)",
      ['install', `deploy:${CANARY}@git.example.test:acme/ext.git`, '--json'],
      {},
    ],
    ['an https URL without its slashes', ['install', `https:${CANARY}@git.example.test/acme/ext.git`, '--json'], {}],
    ['an index URL without its slashes', ['install', 'hello', '--index', `https:${CANARY}@index.example.test/`, '--json'], {}],
  ] as const)('%s: refused without the token', async (_what, args, extra) => {
    const h = home();
    const r = await runCli([...args], { env: { ...h.env, YEP_EXT_HTTP_RETRIES: '0', ...extra } });
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).not.toContain(CANARY);
    expect(jsonOf(r).error.code).not.toBe('E_INTERNAL');
  });
});

describe('an unusable proxy URL is a configuration error naming the variable (exit 2), for HTTP and git', () => {
  const VALUES: Array<[string, string]> = [
    ['another scheme', `ftp://${CANARY}@proxy.example.test:8080`],
    ['a port out of range', `http://${CANARY}@proxy.example.test:99999`],
    ['a port that is not a number', `http://${CANARY}:pw@proxy.example.test:80a`],
    ['a broken IPv6 literal', `http://${CANARY}@[::1`],
    ['an unencoded @ in the password', `http://me:${CANARY}@x@proxy.example.test:3128`],
    ['no scheme and a bad port', `${CANARY}@proxy.example.test:0`],
    ['a path after the port', `http://me:${CANARY}@proxy.example.test:3128/corp`],
    ['a query', `http://${CANARY}@proxy.example.test:3128?x=1`],
    ['a fragment', `http://me:${CANARY}@proxy.example.test:3128#top`],
    ['a broken percent escape in the user name', `http://me%zz:${CANARY}@proxy.example.test:3128`],
    ['a lone % in the password', `http://me:${CANARY}%@proxy.example.test:3128`],
  ];
  // ALL_PROXY is the fallback curl (so git) uses when a scheme has no variable of its own: yep-ext reads it the same way.
  const VARIABLES = ['HTTPS_PROXY', 'https_proxy', 'ALL_PROXY', 'all_proxy'];
  const ROADS: Array<[string, string[], Record<string, string>]> = [
    ['HTTP (install of a crate)', ['install', 'hello', '--json'], HTTP_ENV],
    ['HTTP (search)', ['search', 'hello', '--json'], HTTP_ENV],
    ['git (install of a repository)', ['install', GIT_URL, '--json'], {}],
    ['HTTP (doctor probing an MCP server)', ['doctor', mcpHttpPackage(), '--json'], {}],
  ];
  // Every value on every road with either spelling of the variable is a unit table (test/unit/proxy.test.ts);
  // here each value once, the roads and spellings taken in turn.
  const CASES = VALUES.map(([what, value], i) => [what, value, ROADS[i % ROADS.length]!, VARIABLES[i % VARIABLES.length]!] as const);
  it.each(CASES)('%s (case %#)', async (_what, value, [, args, env], variable) => {
    const h = home();
    const r = await runCli(args, { env: { ...h.env, ...env, [variable]: value } });
    expect(r.code, r.stdout + r.stderr).toBe(2);
    const err = jsonOf(r).error;
    expect(err.code).toBe('E_USAGE');
    expect(err.message.startsWith(`${variable} is not a proxy URL`)).toBe(true);
    expect(err.details.variable).toBe(variable);
    expect(r.stdout + r.stderr).not.toContain(CANARY);
    // Refused before anything was created or sent (doctor: nothing sent to the capability server either).
    expect(existsSync(h.configDir)).toBe(false);
    if (args[0] === 'doctor') expect(existsSync(join(args[1]!, 'bin', 'srv.spoken'))).toBe(false);
  });

  it('the human form names the variable and says what to write', async () => {
    const h = home();
    const r = await runCli(['install', GIT_URL], { env: { ...h.env, HTTP_PROXY: `ftp://${CANARY}@p.example.test` } });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: HTTP_PROXY is not a proxy URL yep-ext can use \("ftp:\/\/\[redacted\]@p\.example\.test"\): the ftp:\/\/ scheme/m);
    expect(r.stderr).toMatch(/^hint: Fix or unset HTTP_PROXY/m);
    expect(r.stderr).not.toContain(CANARY);
  });
});

describe('a git source with credentials in its URL, wherever the lock shows it', () => {
  it.each([
    ['an ssh URL with a password', `ssh://deploy:${CANARY}@git.example.test/acme/ext.git`],
    ["git's scp-like form with a password", `deploy:${CANARY}@git.example.test:acme/ext.git`],
    ['an https URL without its slashes', `https:${CANARY}@git.example.test/acme/ext.git`],
  ])('%s: list, info, verify and outdated (plain and --json) never show the secret', async (_what, url) => {
    const h = home();
    mkdirSync(join(h.configDir, 'extensions', 'ext'), { recursive: true });
    writeFileSync(
      join(h.configDir, 'extensions', 'ext', 'plugin.json'),
      JSON.stringify({ name: 'ext', yolop: { capabilityServer: { command: 'x' }, status: true } }),
    );
    writeFileSync(
      join(h.configDir, 'extensions', 'extensions.lock'),
      `[[extensions]]\nname = "ext"\ncontent_hash = "sha256:${'0'.repeat(64)}"\n\n[extensions.source]\ntype = "git"\nurl = ${JSON.stringify(url)}\nrev = "${'a'.repeat(40)}"\n`,
    );
    let shown = 0;
    for (const args of [['list'], ['info', 'ext'], ['verify'], ['outdated']]) {
      for (const json of [[], ['--json']]) {
        const r = await runCli([...args, ...json], { env: { ...h.env, ...HTTP_ENV, HTTPS_PROXY: 'http://127.0.0.1:1' } });
        const out = r.stdout + r.stderr;
        expect(out, `${args.join(' ')} ${json.join(' ')}`).not.toContain(CANARY);
        if (out.includes('git.example.test')) shown++;
      }
    }
    // The source was shown (host and path), only without its secret.
    expect(shown).toBeGreaterThan(0);
  });
});
