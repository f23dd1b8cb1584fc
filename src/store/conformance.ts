// The ResourceStore conformance suite: the executable form of the contract in types.ts. Every
// store runs it unchanged (SqliteStore in unit tests, KubeStore against a real kube-apiserver in
// e2e), so controller and facade code can rely on one set of semantics and errors.
//
//   describeResourceStoreConformance('SqliteStore', async () => ({ store, namespace, cleanup }));
//
// Rules for the suite itself: use only the ResourceStore interface; give every object a fresh
// name; treat resourceVersions as opaque strings (equality only); never wait on a timer for an
// assertion. A cluster run shares one API server and namespace, so tests must ignore objects
// they did not create.
import { afterAll, beforeAll, describe } from 'vitest';
import { describeObjects } from './conformance/objects.ts';
import { describeUpdates } from './conformance/updates.ts';
import { describeWatch } from './conformance/watch.ts';
import type { ConformanceOptions, ConformanceStore } from './conformance/fixtures.ts';

export type { ConformanceOptions, ConformanceStore } from './conformance/fixtures.ts';

/**
 * Registers the suite under `ResourceStore conformance: <name>`. `makeStore` runs once, before
 * the first test; `cleanup` runs after the last one.
 */
export function describeResourceStoreConformance(
  name: string,
  makeStore: () => Promise<ConformanceStore>,
  options: ConformanceOptions = {},
): void {
  describe(`ResourceStore conformance: ${name}`, () => {
    let current: ConformanceStore | undefined;
    const ctx = (): ConformanceStore => {
      if (!current) throw new Error('conformance: makeStore() has not completed');
      return current;
    };
    beforeAll(async () => {
      current = await makeStore();
    });
    afterAll(async () => {
      await current?.cleanup();
      current = undefined;
    });

    describeObjects(ctx);
    describeUpdates(ctx);
    describeWatch(ctx, options);
  });
}
