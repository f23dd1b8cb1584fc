// The differential suite: the real OpenHands agent server and ours driven with the same flows
// against the same scripted model; what a client sees must agree, except for the deliberate
// differences listed (each argued) in deliberate.ts, and the gaps listed there (not built yet). A listed difference that no longer shows fails
// too, so that the list stays true.
import { appendFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DELIBERATE, GAPS } from './deliberate.ts';
import { FLOWS, type View } from './flows.ts';
import { openhandsBinary, startAgentyard, startOpenHands, type Side } from './servers.ts';

const bin = openhandsBinary();

/**
 * `flow.key` for each key whose values differ, with both values. A `*_fields` key lists field names:
 * there only the fields OpenHands has and ours lacks count (a field more breaks no client).
 */
export function differences(flow: string, theirs: View, ours: View): Map<string, { openhands: unknown; agentyard: unknown }> {
  const out = new Map<string, { openhands: unknown; agentyard: unknown }>();
  for (const key of new Set([...Object.keys(theirs), ...Object.keys(ours)])) {
    if (key.endsWith('_fields') && Array.isArray(theirs[key]) && Array.isArray(ours[key])) {
      const missing = (theirs[key] as string[]).filter((f) => !(ours[key] as string[]).includes(f));
      if (missing.length) out.set(`${flow}.${key}`, { openhands: missing, agentyard: 'missing' });
    } else if (JSON.stringify(theirs[key]) !== JSON.stringify(ours[key])) {
      out.set(`${flow}.${key}`, { openhands: theirs[key], agentyard: ours[key] });
    }
  }
  return out;
}

/** A failed flow is a view too: its error, compared like any other value. */
const settle = (p: Promise<View>): Promise<View> => p.catch((err: Error) => ({ failed: err.message }));

describe.skipIf(!bin)('OpenHands parity (the real agent server, side by side)', () => {
  let oh: Side;
  let ay: Side;
  beforeAll(async () => {
    [oh, ay] = await Promise.all([startOpenHands(bin!), startAgentyard()]);
  }, 300_000);
  afterAll(async () => {
    await Promise.all([oh?.close(), ay?.close()]);
  });

  for (const [flow, run] of Object.entries(FLOWS)) {
    it(flow, async () => {
      // A fresh scripted model for each flow and side (the same script is pushed to both), so that
      // what one flow left unconsumed cannot leak into the next.
      await Promise.all([oh.renewLlm(), ay.renewLlm()]);
      // Both sides to the end before comparing, so a failure on one does not leave the other running on.
      const [theirs, ours] = await Promise.all([settle(run(oh)), settle(run(ay))]);
      const found = differences(flow, theirs, ours);
      const tolerated = { ...DELIBERATE, ...GAPS };
      const unlisted = [...found].filter(([id]) => !tolerated[id]).map(([id, v]) => ({ id, ...v }));
      if (process.env['PARITY_DUMP']) appendFileSync(process.env['PARITY_DUMP'], JSON.stringify({ flow, theirs, ours }) + '\n');
      const stale = Object.keys(tolerated).filter((id) => id.startsWith(`${flow}.`) && !found.has(id));
      expect({ unlisted, stale }).toEqual({ unlisted: [], stale: [] });
    }, 180_000);
  }
});
