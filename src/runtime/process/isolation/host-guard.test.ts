// The host guard's nftables table on the real kernel (root and nft; skipped otherwise). What it
// keeps sandboxes from is tested through real sandboxes in launcher.test.ts and, through
// `agentyard up`, in e2e/embedded/isolation.test.ts.
import { spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { hostGuardRules, hostGuardTable, installHostGuard } from './host-guard.ts';

const nft = ['/usr/sbin/nft', '/sbin/nft', '/usr/bin/nft'].find((p) => spawnSync(p, ['--version']).status === 0);
const canNft = process.getuid?.() === 0 && nft !== undefined;
// A range of its own, so the table is this test's (uids up to 2^32-2 are valid).
const uids = { first: 4_000_000_000 + (process.pid % 1000) * 10, last: 4_000_000_009 + (process.pid % 1000) * 10 };

describe.skipIf(!canNft)('the host guard table (root, nft)', () => {
  afterEach(() => {
    spawnSync(nft!, ['delete', 'table', 'inet', hostGuardTable(uids)], { stdio: 'ignore' });
  });

  it('installs one table per uid range, replaced (not duplicated) by a second start; a bad range fails with nft\'s reason', () => {
    expect(installHostGuard(nft!, uids)).toBeUndefined();
    expect(installHostGuard(nft!, uids)).toBeUndefined();
    const listed = spawnSync(nft!, ['list', 'table', 'inet', hostGuardTable(uids)], { encoding: 'utf8' }).stdout;
    const rules = listed.split('\n').filter((l) => l.includes('reject'));
    expect(rules).toHaveLength(6);
    for (const r of rules) expect(r).toContain(`meta skgid ${uids.first}-${uids.last}`);
    expect(rules.filter((r) => r.includes('fib daddr type local'))).toHaveLength(4);
    expect(listed).toContain('169.254.169.254');
    expect(listed).toContain('fd00:ec2::254');
    expect(installHostGuard(nft!, { first: 5, last: 3 })).toMatch(/^nft refused the rule: .*Error/);
  });
});

describe('the rule text', () => {
  it('names the range and keeps loopback, which pasta splices the API ports through', () => {
    const text = hostGuardRules({ first: 1000, last: 1999 });
    expect(text).toContain('table inet agentyard_sandboxes_1000_1999 {');
    expect(text).toContain('meta skgid 1000-1999 fib daddr type local ip daddr != 127.0.0.0/8 meta l4proto tcp reject with tcp reset');
    expect(text).toContain('meta skgid 1000-1999 fib daddr type local ip6 daddr != ::1 reject with icmpx admin-prohibited');
  });
});
