// Agent-server events: schemas (TypeBox, each schema and its type share a name) and helpers.
export * from './common.ts';
export * from './content.ts';
export * from './actions.ts';
export * from './observations.ts';
export * from './tools.ts';
export * from './events.ts';
export * from './kinds.ts';
export * from './validate.ts';
export * from './defaults.ts';
export * from './parse.ts';
export * from './make.ts';
