/**
 * A private CA made in the test with the machine's `openssl`: a root
 * CA and one server certificate it signs for the given DNS names (and 127.0.0.1),
 * written to a temp directory. Used to test NODE_EXTRA_CA_CERTS against a loopback
 * HTTPS registry: nothing here is trusted by Node unless a test hands it the CA file.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { need, type Need } from './needs.js';

export interface TestCa {
  dir: string;
  /** The CA certificate (PEM file): what NODE_EXTRA_CA_CERTS points at. */
  caFile: string;
  key: Buffer;
  cert: Buffer;
  cleanup(): void;
}

function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export const NEEDS_OPENSSL: Need = need(hasOpenssl(), '`openssl` (Debian package openssl)');

/**
 * The keys are ECDSA P-256: what the tests check (a private CA trusted or refused, through a
 * proxy or not) does not depend on the key's algorithm, and an RSA key's prime search costs
 * openssl more than all the rest it does here, and a different amount at every run.
 */
const NEW_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1'];

export function makeTestCa(names: string[]): TestCa {
  const dir = mkdtempSync(join(tmpdir(), 'yep-ca-'));
  const run = (...args: string[]): void => void execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  run(
    'req',
    '-x509',
    ...NEW_KEY,
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '2',
    '-subj',
    '/CN=yep-ext test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  run('req', ...NEW_KEY, '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', `/CN=${names[0]}`);
  const san = [...names.map((n) => `DNS:${n}`), 'IP:127.0.0.1'].join(',');
  writeFileSync(join(dir, 'ext.cnf'), `subjectAltName=${san}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`);
  run('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '2', '-extfile', 'ext.cnf');
  return {
    dir,
    caFile: join(dir, 'ca.pem'),
    key: readFileSync(join(dir, 'server.key')),
    cert: readFileSync(join(dir, 'server.pem')),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
