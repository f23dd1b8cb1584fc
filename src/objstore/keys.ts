// The key layout of the object store. Two trees, so that what a user may read and what they may not
// can never be confused by a prefix match:
//   conversations/<conversation id>/...          the conversation's own data; deleted with it and
//                                                 handed to its owner in the conversation download
//   internal/workspace-archives/<sandbox>-<stamp>.tar.gz
//                                                 the workspace archive taken when a sandbox is
//                                                 deleted (spec part 3): for debugging, support and
//                                                 audit, never served by any route; kept when the
//                                                 conversation is deleted
//   internal/conversation-files/<sandbox>-<stamp>.tar.gz
//                                                 a Kubernetes sandbox's conversation directories as
//                                                 its archive Pod uploaded them; the controller
//                                                 unpacks them into conversations/<id>/files/ and
//                                                 deletes this object
import { Invalid } from '../api/errors.ts';

const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** Refuses keys that could escape a directory or mean different things to S3 and a filesystem. */
export function checkKey(key: string): string {
  const segments = key.split('/');
  if (key.length > 900 || segments.some((s) => !SEGMENT.test(s) || s === '..')) {
    throw new Invalid([{ loc: ['key'], msg: `not a valid object key: ${JSON.stringify(key)}`, type: 'value_error' }]);
  }
  return key;
}

export function checkPrefix(prefix: string): string {
  if (!prefix.endsWith('/')) throw new Invalid([{ loc: ['prefix'], msg: `an object prefix ends with '/': ${JSON.stringify(prefix)}`, type: 'value_error' }]);
  checkKey(prefix.slice(0, -1));
  return prefix;
}

export const CONVERSATIONS = 'conversations/';
export const WORKSPACE_ARCHIVES = 'internal/workspace-archives/';
export const CONVERSATION_FILE_UPLOADS = 'internal/conversation-files/';

export const conversationPrefix = (conversationId: string) => checkPrefix(`${CONVERSATIONS}${conversationId}/`);
/** A file of the conversation's own directory, by its path relative to that directory. */
export const conversationFileKey = (conversationId: string, relPath: string) => checkKey(`${conversationPrefix(conversationId)}files/${relPath}`);
export const workspaceArchiveKey = (sandbox: string, stamp: string) => checkKey(`${WORKSPACE_ARCHIVES}${sandbox}-${stamp}.tar.gz`);
export const conversationFilesUploadKey = (sandbox: string, stamp: string) => checkKey(`${CONVERSATION_FILE_UPLOADS}${sandbox}-${stamp}.tar.gz`);
/** A path segment made usable in a key (spaces, leading dots), not dropped. */
export const safeSegment = (s: string) => s.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^[._-]/, '_');
/** A timestamp usable in a key (no ':' or '.'). */
export const keyStamp = (d: Date) => d.toISOString().replace(/[:.]/g, '-');
