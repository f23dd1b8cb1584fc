// The access token's check against the issuer's JWKS (stand-in issuer over HTTP): the account of a
// token the issuer signed, nothing for one signed by another key, past its expiry, or not a JWT.
import { generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAiSubscriptionStandIn, type OpenAiSubscriptionStandIn } from '../../testing/openai-subscription/server.ts';
import { OpenAiAuth } from './openai-auth.ts';

let clock = Date.parse('2026-03-01T10:00:00Z');
let o: OpenAiSubscriptionStandIn;
beforeAll(async () => void (o = await startOpenAiSubscriptionStandIn([], { now: () => clock })));
afterAll(() => o.close());

describe('OpenAiAuth', () => {
  it('signs in by device code and verifies the access token against the JWKS', async () => {
    const auth = new OpenAiAuth({ issuer: `${o.issuer}/`, now: () => clock });
    const device = await auth.requestDeviceCode();
    expect(device).toMatchObject({ verificationUrl: `${o.issuer}/codex/device`, intervalSeconds: 5 });
    expect(await auth.pollDeviceCode(device)).toBeNull();
    o.approve(device.userCode);
    const approved = (await auth.pollDeviceCode(device))!;
    const tokens = await auth.exchangeCode(approved.code, approved.verifier);
    expect(await auth.verify(tokens.accessToken)).toEqual({ accountId: 'acct-standin-0001', email: 'user@example.test' });

    // Same claims, another key: not the issuer's.
    const { privateKey } = await generateKeyPair('RS256');
    const forged = await new SignJWT({ 'https://api.openai.com/auth': { chatgpt_account_id: 'acct-forged' } }).setProtectedHeader({ alg: 'RS256', kid: 'forged' }).setIssuedAt(clock / 1000).setExpirationTime(clock / 1000 + 3600).sign(privateKey);
    expect(await auth.verify(forged)).toBeNull();
    expect(await auth.verify('not-a-jwt')).toBeNull();
    clock += 2 * 3600_000;
    expect(await auth.verify(tokens.accessToken)).toBeNull();
    // A code is good once: the second exchange is refused, and the answer's body is not repeated.
    await expect(auth.exchangeCode(approved.code, approved.verifier)).rejects.toMatchObject({ code: 'BadGateway', detail: 'Token exchange with the OpenAI sign-in server failed (HTTP 400)' });
  });
});
