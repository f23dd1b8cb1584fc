// Wire compatibility of the hooks and bash-API schemas with @openhands/typescript-client (checked by tsc).
import type * as OH from '../../../node_modules/@openhands/typescript-client/dist/generated/agent-server-schema.js';
import { describe, expect, it } from 'vitest';
import type { StoredBashEventPage } from './bash.ts';
import { HookConfig, HooksRequest, type HooksResponse } from './hooks.ts';
import { parseBody } from './index.ts';

type Extends<A, B> = [A] extends [B] ? true : false;
type Assert<T extends true> = T;

export type Checks = [
  Assert<Extends<HooksResponse, OH.HooksResponse>>,
  Assert<Extends<OH.HooksRequest, HooksRequest>>,
  Assert<Extends<HookConfig, OH.HookConfigOutput>>,
  // The generated OH.BashEventPage namespaces `kind` (an impossible intersection); items checked one by one.
  Assert<Extends<StoredBashEventPage['items'][number], OH.BashCommand | OH.BashOutput>>,
];

describe('hooks schemas and the OpenHands client', () => {
  it('a HookConfig the client sends parses with our schema, defaults filled', () => {
    const sent: OH.HookConfigInput = { pre_tool_use: [{ matcher: 'terminal', hooks: [{ command: 'x.sh', timeout: 5 }] }] };
    const parsed = parseBody(HookConfig, sent);
    expect(parsed.pre_tool_use![0]!.hooks![0]).toEqual({ command: 'x.sh', timeout: 5, type: 'command', tools: [], max_iterations: 3, async: false });
    expect(parseBody(HooksRequest, { project_dir: '/w' } satisfies OH.HooksRequest)).toEqual({ project_dir: '/w' });
  });
});
