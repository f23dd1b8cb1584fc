// The facade's public surface.
export { API_PREFIX, createApiApp, createFacade } from './app.ts';
export { startApiServer, type ApiServer, type ApiServerOptions } from './server.ts';
export { SqliteAppStore } from './db/app-db.ts';
export { PostgresAppStore } from './db/postgres/app-store.ts';
export { openAppStore, isPostgresUrl } from './db/open.ts';
export type { AppStore, AppUser, UserSettings } from './db/types.ts';
export { errorMiddleware, STATUS_BY_CODE } from './errors.ts';
export { validate, parseQuery } from './validate.ts';
export { eventSinkUrl } from './routes/webhooks.ts';
export { PendingDelivery } from './delivery.ts';
export { ConversationCleanup } from './cleanup.ts';
export type { AgentClientFactory, AgentMessenger, FacadeDeps, FacadeSettings } from './deps.ts';
