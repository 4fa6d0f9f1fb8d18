/** Install-by-hand for tests of enable/set-secret: writes <store>/<name>/plugin.json directly. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const LOGFIRE_SCHEMA = {
  type: 'object',
  required: ['token', 'endpoint', 'mode'],
  properties: {
    token: { type: 'string', secret: true, env: 'LOGFIRE_TOKEN', minLength: 4, description: 'API token' },
    endpoint: { type: 'string', format: 'uri', description: 'Where traces go' },
    mode: { type: 'string', enum: ['fast', 'slow'] },
    port: { type: 'integer', minimum: 1, maximum: 65535 },
    ratio: { type: 'number', minimum: 0, maximum: 1 },
    verbose: { type: 'boolean' },
    tags: { type: 'array', items: { type: 'string' } },
    service_name: { type: 'string', default: 'yolop' },
  },
};

export function writeExtension(storeDir: string, name: string, configSchema: Record<string, unknown> | null = LOGFIRE_SCHEMA): string {
  const dir = join(storeDir, name);
  mkdirSync(dir, { recursive: true });
  const manifest = {
    name,
    version: '0.1.0',
    yolop: { capabilityServer: { command: 'server' }, tools: [{ name: 'ping' }], ...(configSchema ? { config_schema: configSchema } : {}) },
  };
  writeFileSync(join(dir, 'plugin.json'), JSON.stringify(manifest, null, 2));
  return dir;
}
