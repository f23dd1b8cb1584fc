// The browser's side of /api/v1: every call carries the API key the person signed in with (kept
// in this tab's sessionStorage, like /launch does, so it never reaches a URL, a cookie or a log).
export const KEY_STORAGE = 'agentyard.apiKey';
/** Dispatched on window when the API refuses the key (revoked, or the user disabled): the app signs out. */
export const KEY_REFUSED = 'agentyard:key-refused';

export interface FieldError {
  loc: (string | number)[];
  msg: string;
}

export class ApiError extends Error {
  readonly status: number;
  readonly fields: FieldError[];
  constructor(status: number, message: string, fields: FieldError[]) {
    super(message);
    this.status = status;
    this.fields = fields;
  }

  /** The message for a form field: the 422 entries whose path names it (e.g. body.selected_branch). */
  forField(name: string): string | undefined {
    const hits = this.fields.filter((f) => f.loc.includes(name));
    return hits.length > 0 ? hits.map((f) => f.msg).join('; ') : undefined;
  }
}

/**
 * The `key` of a tab signed in through OpenID Connect (README, "Login"): the httpOnly session cookie
 * authenticates, and every state-changing call carries the session's CSRF token. No API key looks
 * like this (spaces), so the components pass it on like a key.
 */
export const COOKIE_SESSION = '(browser session)';
let csrfToken = '';
/** The session's CSRF token: what the event relay's first frame carries for a cookie session. */
export const sessionCsrfToken = (): string => csrfToken;

export interface AuthSession {
  oidc: boolean;
  user: { id: string; name: string; admin: boolean } | null;
  csrf_token?: string;
}

/** Who the session cookie signs in (none without OIDC login or a session); keeps its CSRF token. */
export async function loadSession(): Promise<AuthSession> {
  const res = await fetch('/auth/session');
  const s = res.ok ? ((await res.json()) as AuthSession) : { oidc: false, user: null };
  csrfToken = s.csrf_token ?? '';
  return s;
}

/** Ends the session (and at the provider, when it offers that): the browser goes where the answer says. */
export async function logout(): Promise<void> {
  const res = await fetch('/auth/logout', { method: 'POST', headers: { 'x-csrf-token': csrfToken } });
  csrfToken = '';
  location.assign(res.ok ? ((await res.json()) as { redirect: string }).redirect : '/');
}

export async function api<T>(key: string, method: string, path: string, body?: unknown): Promise<T> {
  const auth: Record<string, string> = key !== COOKIE_SESSION ? { authorization: `Bearer ${key}` } : method === 'GET' ? {} : { 'x-csrf-token': csrfToken };
  const res = await fetch(`/api/v1${path}`, {
    method,
    headers: { ...auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  let payload: unknown = null;
  try {
    payload = await res.json();
  } catch {
    payload = null;
  }
  if (!res.ok) {
    const detail = (payload as { detail?: unknown } | null)?.detail;
    if (res.status === 401) dispatchEvent(new Event(KEY_REFUSED));
    const fields = Array.isArray(detail) ? (detail as FieldError[]) : [];
    const text = typeof detail === 'string' ? detail : fields.length > 0 ? fields.map((f) => `${f.loc.join('.')}: ${f.msg}`).join('; ') : `HTTP ${res.status}`;
    throw new ApiError(res.status, res.status === 401 ? (key === COOKIE_SESSION ? 'The session has ended.' : 'The API key was refused.') : text, fields);
  }
  return payload as T;
}

export interface Conversation {
  id: string;
  title: string | null;
  sandbox_id: string | null;
  selected_repository: string | null;
  selected_branch: string | null;
  sandbox_status: string;
  execution_status: string | null;
  conversation_url: string | null;
  session_api_key: string | null;
  created_at: string;
  updated_at: string;
}

export interface StartTask {
  id: string;
  status: string;
  detail: string | null;
  app_conversation_id: string | null;
}

/** An agent-server event on the OpenHands wire; the transcript reads only the fields it shows. */
export interface AgentEvent {
  id: string;
  kind: string;
  source?: string;
  timestamp?: string;
  [field: string]: unknown;
}

/** Polls a start task (a start or a fork) until its conversation exists; ERROR throws its detail. */
export async function awaitConversation(key: string, taskId: string, onStatus: (status: string) => void): Promise<string> {
  for (;;) {
    const [t] = await api<(StartTask | null)[]>(key, 'GET', `/app-conversations/start-tasks?ids=${taskId}`);
    if (t?.status === 'ERROR') throw new ApiError(500, t.detail ?? 'The start failed', []);
    if (t?.app_conversation_id) return t.app_conversation_id;
    onStatus(t?.status ?? 'WORKING');
    await new Promise((r) => setTimeout(r, 1000));
  }
}
