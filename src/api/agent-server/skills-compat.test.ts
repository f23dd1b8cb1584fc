// Wire compatibility of the skills schemas with @openhands/typescript-client (checked by tsc), and
// a request the client builds parsing with ours.
import type * as OH from '../../../node_modules/@openhands/typescript-client/dist/generated/agent-server-schema.js';
import { describe, expect, it } from 'vitest';
import { parseBody } from './index.ts';
import { SkillsRequest, type SkillInfo, type SkillsResponse } from './skills.ts';

type Extends<A, B> = [A] extends [B] ? true : false;
type Assert<T extends true> = T;

export type Checks = [Assert<Extends<SkillsResponse, OH.SkillsResponse>>, Assert<Extends<SkillInfo, OH.SkillInfo>>, Assert<Extends<OH.SkillsRequest, SkillsRequest>>];

describe('skills schemas and the OpenHands client', () => {
  it('a SkillsRequest the client sends parses with our schema, defaults filled', () => {
    const sent: OH.SkillsRequest = {
      project_dir: '/w',
      load_public: false,
      org_configs: [{ repository: 'o/r', provider: 'github', org_repo_url: 'https://t@example.com/o/.agents.git', org_name: 'o' }],
      sandbox_config: { exposed_urls: [{ name: 'WORKER_1', url: 'http://x', port: 1 }] },
      registered_marketplaces: [{ name: 'm', source: 'github:o/m', auto_load: true }],
    };
    expect(parseBody(SkillsRequest, sent)).toMatchObject({ project_dir: '/w', load_public: false, load_user: true, load_project: true, load_org: true, registered_marketplaces: [{ name: 'm' }] });
  });
});
