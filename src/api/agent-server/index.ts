// Agent server HTTP API schemas (OpenHands agent-server compatible). Schema and type share a name.
export * from './agent.ts';
export * from './acp.ts';
export * from './policy.ts';
export * from './security-analyzer.ts';
export * from './conversation.ts';
export * from './tree.ts';
export * from './server.ts';
export * from './skills.ts';
export * from './parse.ts';
