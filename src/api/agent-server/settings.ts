// The agent server's own stored settings, as OpenHands 1.58 serves them: named secrets
// (`/api/settings/secrets`), the GUI's saved workspaces (`/api/workspaces`), the workspace session
// cookie (`/api/auth/workspace-session`) and deferred initialization (`/api/init`). Field names,
// aliases and limits are OpenHands' (its persistence models and settings API models).
import Type, { type Static } from 'typebox';
import { Nullable } from '../events/common.ts';

/** OpenHands' SECRET_NAME_PATTERN: a letter, then letters, digits and underscores, 1-64 in all. */
export const SECRET_NAME_PATTERN = /^[a-zA-Z][a-zA-Z0-9_]{0,63}$/;
export const SECRET_NAME_MESSAGE =
  'Invalid secret name format. Must start with a letter, contain only letters, numbers, and underscores, and be 1-64 characters long.';

/** PUT /api/settings/secrets: create or replace one secret. The name is checked by the route (OpenHands' message, not a located issue). */
export const SecretCreateRequest = Type.Object({
  name: Type.String(),
  value: Type.String(),
  description: Nullable(Type.String()),
});
export type SecretCreateRequest = Static<typeof SecretCreateRequest>;

/** A secret as lists and writes show it: never its value. */
export const SecretItemResponse = Type.Object({
  name: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
});
export type SecretItemResponse = Static<typeof SecretItemResponse>;

export const SecretsListResponse = Type.Object({ secrets: Type.Array(SecretItemResponse) });

export const SecretDeleted = Type.Object({ deleted: Type.Boolean() });

// Workspaces: ids are opaque (the GUI sets id == path); both are capped alike so a long path is never refused by its id.
const WorkspaceText = Type.String({ minLength: 1, maxLength: 4096 });
const WorkspaceName = Type.String({ minLength: 1, maxLength: 256 });

/**
 * A saved workspace. `parentPath` is the wire name (OpenHands' alias); `parent_path` is accepted on
 * input too, as pydantic's populate_by_name does.
 */
export const WorkspaceItem = Type.Object({
  id: WorkspaceText,
  name: WorkspaceName,
  path: WorkspaceText,
  parentPath: Nullable(Type.String({ maxLength: 4096 })),
  parent_path: Nullable(Type.String({ maxLength: 4096 })),
});
export type WorkspaceItem = Static<typeof WorkspaceItem>;

export const WorkspaceParentItem = Type.Object({ id: WorkspaceText, name: WorkspaceName, path: WorkspaceText });
export type WorkspaceParentItem = Static<typeof WorkspaceParentItem>;

export const AddWorkspacesRequest = Type.Object({ workspaces: Type.Array(WorkspaceItem) });
export const AddWorkspaceParentsRequest = Type.Object({ parents: Type.Array(WorkspaceParentItem) });

/** What the workspace routes answer: `parentPath` only where set. */
export const WorkspacesListResponse = Type.Object({
  workspaces: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), path: Type.String(), parentPath: Type.Optional(Type.String()) })),
  workspaceParents: Type.Array(WorkspaceParentItem),
});
export type WorkspacesListResponse = Static<typeof WorkspacesListResponse>;

/** The absolute path a DELETE removes (`?path=`). */
export const WorkspacePathQuery = Type.Object({ path: Type.String() });

export const WORKSPACE_SESSION_COOKIE = 'oh_workspace_session_key';
