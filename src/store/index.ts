// The store part's public surface. KubeStore is not re-exported, so that embedded mode never
// loads @kubernetes/client-node: import it from './kube/kube-store.ts'. The conformance suite
// (./conformance.ts) imports vitest and is for test files only.
export type { ListOptions, ListResult, ResourceStore, WatchEvent, WatchEventType, WatchOptions } from './types.ts';
export {
  labelSelectorMatcher,
  matchesLabelSelector,
  parseLabelSelector,
  type LabelOperator,
  type LabelRequirement,
  type Labels,
} from './label-selector.ts';
export { SqliteStore, type SqliteStoreOptions } from './sqlite/sqlite-store.ts';
