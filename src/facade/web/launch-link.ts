// Launch links: {app_url}/launch?plugins=<encoded>&message=<text>
//
// Encoding (decided here; the directory page and tests produce links the same way):
//   plugins = base64url (RFC 4648 section 5, "=" padding optional) of the UTF-8 JSON text of an array
//             of {source, ref?, repo_path?, parameters?} — the start request's `plugins` items.
//             Standard base64 ("+", "/") is accepted too, because btoa() writes it and people paste
//             it; a "+" that a query string turned into a space is put back.
//   message = plain text in its own query parameter (ordinary URL encoding), optional.
// JSON rather than one query parameter per field: a plugin list nests (parameters) and must reach
// the start request unchanged. base64url rather than raw JSON: links survive chat clients and
// e-mail that mangle quotes, braces and brackets. No secret ever belongs in a link: parameters are
// visible to anyone who sees it, and the API key is typed into the page, never put in the URL.
import { Value } from 'typebox/value';
import Type from 'typebox';
import { BadRequest } from '../../api/errors.ts';
import { PluginSpec } from '../../api/conversation.ts';

export const MAX_LAUNCH_PLUGINS = 10;
export const MAX_ENCODED_LENGTH = 16 * 1024;
export const MAX_MESSAGE_LENGTH = 20_000;

const LaunchPlugins = Type.Array(PluginSpec, { minItems: 1, maxItems: MAX_LAUNCH_PLUGINS });

export interface LaunchRequest {
  plugins: PluginSpec[];
  message: string;
}

export function encodeLaunchPlugins(plugins: PluginSpec[]): string {
  return Buffer.from(JSON.stringify(plugins), 'utf8').toString('base64url');
}

/** The plugins and message of a launch link's query, or BadRequest saying what is wrong with the link. */
export function parseLaunchQuery(query: Record<string, string | string[] | undefined>): LaunchRequest {
  const raw = query['plugins'];
  if (raw === undefined || raw === '') throw new BadRequest('The link has no plugins parameter: a launch link is /launch?plugins=<base64url of a JSON array of plugins>.');
  if (Array.isArray(raw)) throw new BadRequest('The link has more than one plugins parameter; put every plugin in one JSON array.');
  if (raw.length > MAX_ENCODED_LENGTH) throw new BadRequest(`The plugins parameter is longer than ${MAX_ENCODED_LENGTH} characters.`);
  const b64 = raw.trim().replaceAll(' ', '+');
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(b64)) throw new BadRequest('The plugins parameter is not base64: it may have been cut or changed when the link was copied.');
  const text = Buffer.from(b64.replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, ''), 'base64url').toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new BadRequest('The plugins parameter does not decode to JSON: it may have been cut when the link was copied.');
  }
  if (!Value.Check(LaunchPlugins, parsed)) {
    const first = [...Value.Errors(LaunchPlugins, parsed)][0];
    const where = first?.instancePath ? ` at ${first.instancePath}` : '';
    throw new BadRequest(`The plugins in this link are not valid${where}: ${first?.message ?? 'expected an array of {source, ref?, repo_path?, parameters?}'}.`);
  }
  const message = query['message'];
  if (Array.isArray(message)) throw new BadRequest('The link has more than one message parameter.');
  if ((message ?? '').length > MAX_MESSAGE_LENGTH) throw new BadRequest(`The message is longer than ${MAX_MESSAGE_LENGTH} characters.`);
  return { plugins: parsed, message: message ?? '' };
}
