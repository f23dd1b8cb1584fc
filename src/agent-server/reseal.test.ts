// Key rotation over every sealed store, on a real SQLite file: what key A sealed opens, after
// resealStores with B (A previous), with B alone; what no key opens stays byte for byte and is
// reported by its row key only.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../util/log.ts';
import { McpOAuthStore } from './mcp/token-store.ts';
import { resealStores } from './reseal.ts';
import { SecretSealer } from './secrets.ts';
import { openDatabase, type Db } from './store/db.ts';
import { ProfileStore } from './store/profile-store.ts';
import { ProviderConnectionStore } from './store/provider-connection-store.ts';
import { SettingsDocStore, SettingsSecretStore } from './store/settings-store.ts';
import { SubscriptionStore } from './store/subscription-store.ts';
import { defaultSettings } from './settings-doc.ts';
import { tempDir } from './test-support.ts';

const log = createLogger('test', 'silent');
let dir: ReturnType<typeof tempDir> | undefined;
afterEach(() => dir?.remove());

/** Every store, on `db` with `sealer`; `fill` writes one secret into each. */
function stores(db: Db, dataDir: string, sealer: SecretSealer) {
  const connections = new ProviderConnectionStore(db, sealer, log);
  const s = {
    secrets: new SettingsSecretStore(db, sealer, log),
    connections,
    doc: new SettingsDocStore(db, sealer, log, () => defaultSettings('openai/x')),
    profiles: new ProfileStore(db, sealer, { connections }),
    subscription: new SubscriptionStore(db, sealer, log),
    mcp: new McpOAuthStore({ dataDir, sealer, log }),
  };
  return {
    ...s,
    fill(): string {
      s.secrets.put('GITHUB_TOKEN', 'v-secret', null);
      const id = s.connections.create({ display_name: 'c', provider: 'openai', base_url: null }, 'v-connection').id;
      s.doc.update((d) => void (d.agent_settings.llm.api_key = 'v-doc'));
      s.profiles.save('p', { model: 'openai/x' } as never, 'v-profile', 10);
      s.subscription.save('openai', { accessToken: 'v-access', refreshToken: 'v-refresh', expiresAt: 1 });
      s.mcp.update('http://127.0.0.1:1/mcp', () => ({ tokens: { access_token: 'v-mcp', token_type: 'Bearer' } }));
      db.prepare("INSERT INTO conversations (id, created_at, updated_at, execution_status, request, tags, sealed_secrets) VALUES ('c1', '', '', 'idle', '{}', '{}', ?)").run(sealer.seal({ secrets: { T: 'v-conversation' } }, 'c1'));
      return id;
    },
    read(id: string) {
      const conv = db.prepare("SELECT sealed_secrets FROM conversations WHERE id = 'c1'").get() as { sealed_secrets: string };
      return {
        secret: s.secrets.get('GITHUB_TOKEN'),
        connection: s.connections.apiKey(id),
        doc: s.doc.load().agent_settings.llm.api_key,
        profile: (() => { try { return s.profiles.apiKey('p'); } catch { return undefined; } })(),
        subscription: s.subscription.get('openai')?.accessToken,
        mcp: new McpOAuthStore({ dataDir, sealer, log }).get('http://127.0.0.1:1/mcp')?.tokens?.access_token,
        conversation: sealer.open(conv.sealed_secrets, 'c1')?.secrets['T'],
      };
    },
  };
}

const ALL = { secret: 'v-secret', connection: 'v-connection', doc: 'v-doc', profile: 'v-profile', subscription: 'v-access', mcp: 'v-mcp', conversation: 'v-conversation' };

describe('resealStores', () => {
  it('seals again with the current key what a previous key sealed, in every store, so the previous key can go', () => {
    dir = tempDir();
    const db = openDatabase(dir.path);
    const id = stores(db, dir.path, new SecretSealer('key-a')).fill();
    const gone = { secret: undefined, connection: undefined, doc: undefined, profile: undefined, subscription: undefined, mcp: undefined, conversation: undefined };
    expect(stores(db, dir.path, new SecretSealer('key-b')).read(id)).toEqual(gone);

    const rotated = new SecretSealer('key-b', ['key-a']);
    expect(stores(db, dir.path, rotated).read(id)).toEqual(ALL);
    const report = resealStores({ db, dataDir: dir.path, sealer: rotated, log });
    expect(report.unopenable).toEqual({});
    expect(report.resealed).toEqual({ 'conversation secrets': 1, 'settings secrets': 1, 'provider connection keys': 1, 'LLM profile keys': 1, 'subscription credentials': 1, 'stored settings': 1, 'MCP OAuth tokens': 1 });
    expect(stores(db, dir.path, new SecretSealer('key-b')).read(id)).toEqual(ALL);
    // A second start finds nothing to do.
    expect(resealStores({ db, dataDir: dir.path, sealer: rotated, log }).resealed).toEqual({});
  });

  it('leaves what no configured key opens exactly as stored, and names it by key only', () => {
    dir = tempDir();
    const db = openDatabase(dir.path);
    stores(db, dir.path, new SecretSealer('key-a')).fill();
    const dump = () => JSON.stringify(db.prepare('SELECT * FROM settings_secrets').all()) + JSON.stringify(db.prepare('SELECT * FROM settings_documents').all()) + readFileSync(join(dir!.path, 'mcp-oauth.json'), 'utf8');
    const before = dump();
    const report = resealStores({ db, dataDir: dir.path, sealer: new SecretSealer('key-c', ['key-b']), log });
    expect(report.resealed).toEqual({});
    expect(report.unopenable).toEqual({ 'conversation secrets': ['c1'], 'settings secrets': ['GITHUB_TOKEN'], 'provider connection keys': [expect.any(String)], 'LLM profile keys': ['p'], 'subscription credentials': ['openai'], 'stored settings': ['agent_settings'], 'MCP OAuth tokens': ['http://127.0.0.1:1/mcp'] });
    expect(dump()).toBe(before);
  });
});

describe('SecretSealer with previous keys', () => {
  it('opens with the current key, then each previous one; reseal keeps a current text and refuses a foreign one', () => {
    const a = new SecretSealer('key-a');
    const sealed = a.seal({ secrets: { X: 'v' } }, 'ctx');
    const b = new SecretSealer('key-b', ['', 'key-b', 'key-a']);
    expect(b.open(sealed, 'ctx')).toEqual({ secrets: { X: 'v' } });
    expect(b.open(sealed, 'other-ctx')).toBeUndefined();
    const again = b.reseal(sealed, 'ctx')!;
    expect(again).not.toBe(sealed);
    expect(new SecretSealer('key-b').open(again, 'ctx')).toEqual({ secrets: { X: 'v' } });
    expect(b.reseal(again, 'ctx')).toBe(again);
    expect(new SecretSealer('key-c').reseal(sealed, 'ctx')).toBeUndefined();
  });
});
