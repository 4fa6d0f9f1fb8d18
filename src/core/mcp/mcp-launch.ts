/**
 * How the host starts an MCP server an extension contributes (plugin.json
 * `mcpServers`), as data. Host 0.18 (`ExtensionCapability::contributed_mcp_servers`,
 * src/extensions/capability.rs) hands each declaration unchanged to its own MCP
 * client under the key `<extension>__<server>`: a stdio server is `command` +
 * `args` with `env` added to the host's environment (no `<package>/bin` on PATH,
 * no extension config or secrets: those go to the capability server only), an
 * http server is `url` with `headers`, over streamable HTTP. `${VAR}` in those
 * strings is expanded from the environment as for `.mcp.json` (the host's
 * `mcp_config::expand_env`, read in its v0.3.0 source: `${NAME}` is replaced
 * when NAME is set and left as written when it is not; nothing else is special).
 */
import { percentDecoded } from '../text/percent-decode.js';
import type { McpServerDecl } from '../package/manifest.js';
import { MIN_FRAGMENT } from '../text/redact.js';

type Env = Record<string, string | undefined>;

export interface McpLaunch {
  /** The key in plugin.json's `mcpServers`. */
  server: string;
  /** The name the host gives it: `<extension>__<server>`. */
  hostName: string;
  transport: 'stdio' | 'http';
  /** stdio: argv[0] and the rest, `${VAR}` expanded. */
  command?: string;
  args: string[];
  /** stdio: the variables added to the inherited environment, expanded. */
  env: Record<string, string>;
  /** http: the endpoint, expanded. */
  url?: string;
  /** http: the request headers, expanded. */
  headers: Record<string, string>;
  /** What plugin.json says, unexpanded (safe to show: no value of a variable is in it). */
  declared: string;
  /** `${NAME}` references whose NAME is not set: the host passes them on as written. */
  unset: string[];
  /**
   * Values never to show: every env and header value after expansion and every
   * variable's value put in (a token may come either way), at least MIN_FRAGMENT
   * characters long (shorter ones would mask ordinary words in the report).
   */
  secrets: string[];
}

/** The host's expansion of `${NAME}` (unset: left as written; no closing brace: the rest verbatim). */
function expandEnvRefs(text: string, env: Env): { text: string; used: string[]; unset: string[] } {
  let out = '';
  let rest = text;
  const used: string[] = [];
  const unset: string[] = [];
  for (let start = rest.indexOf('${'); start !== -1; start = rest.indexOf('${')) {
    out += rest.slice(0, start);
    const after = rest.slice(start + 2);
    const end = after.indexOf('}');
    if (end === -1) {
      out += rest.slice(start);
      rest = '';
      break;
    }
    const name = after.slice(0, end);
    const value = Object.hasOwn(env, name) ? env[name] : undefined;
    if (value === undefined) {
      out += rest.slice(start, start + 2 + end + 1);
      unset.push(name);
    } else {
      out += value;
      used.push(value);
    }
    rest = after.slice(end + 1);
  }
  return { text: out + rest, used, unset };
}

/**
 * A user and password in an http server's URL, as the host's HTTP client (reqwest) sends
 * them: as Basic authorization (unless a header already gives one), the URL without them.
 * fetch refuses a URL that carries credentials, so doctor would fail a server that works.
 */
function withUrlCredentials(text: string, headers: Record<string, string>): { url: string; headers: Record<string, string>; credentials: string[] } {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { url: text, headers, credentials: [] };
  }
  if (url.username === '' && url.password === '') return { url: text, headers, credentials: [] };
  // What a server could echo back: the user and password as written and decoded, the pair, and its Basic encoding.
  const credentials = [url.password, percentDecoded(url.password) ?? '', url.username, percentDecoded(url.username) ?? ''];
  // As reqwest decodes them (percent_decode, then UTF-8).
  const user = percentDecoded(url.username);
  const password = percentDecoded(url.password) ?? '';
  url.username = '';
  url.password = '';
  // A user name that is not UTF-8 once decoded: reqwest sends no authorization for it.
  if (user === undefined || Object.keys(headers).some((k) => k.toLowerCase() === 'authorization')) return { url: url.href, headers, credentials };
  const userinfo = `${user}:${password}`;
  const basic = Buffer.from(userinfo, 'utf8').toString('base64');
  return { url: url.href, headers: { Authorization: `Basic ${basic}`, ...headers }, credentials: [...credentials, userinfo, basic] };
}

/** The launch of one declared MCP server for extension `ext`, expanded against `env`. */
export function planMcpLaunch(ext: string, server: string, decl: McpServerDecl, env: Env): McpLaunch {
  const used: string[] = [];
  const unset = new Set<string>();
  const expand = (s: string): string => {
    const r = expandEnvRefs(s, env);
    used.push(...r.used);
    for (const n of r.unset) unset.add(n);
    return r.text;
  };
  const expandMap = (m: Record<string, string>): Record<string, string> => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, expand(v)]));
  const base = { server, hostName: `${ext}__${server}`, transport: decl.type };
  let launch: Omit<McpLaunch, 'unset' | 'secrets'>;
  const credentials: string[] = [];
  if (decl.type === 'http') {
    const { url, headers, credentials: given } = withUrlCredentials(expand(decl.url ?? ''), expandMap(decl.headers));
    credentials.push(...given);
    launch = { ...base, url, args: [], env: {}, headers, declared: decl.url ?? '' };
  } else {
    launch = {
      ...base,
      command: expand(decl.command ?? ''),
      args: decl.args.map(expand),
      env: expandMap(decl.env),
      headers: {},
      declared: [decl.command ?? '', ...decl.args].join(' '),
    };
  }
  const secrets = [...used, ...credentials, ...Object.values(launch.env), ...Object.values(launch.headers)].filter((v) => v.length >= MIN_FRAGMENT);
  return { ...launch, unset: [...unset].sort(), secrets: [...new Set(secrets)] };
}
