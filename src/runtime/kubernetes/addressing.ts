// Sandbox addresses (spec part 1 item 3): one host per sandbox, `<runtime_id><separator><base>`,
// e.g. `abc-runtime.agents.example.com`, all under one wildcard DNS record and certificate.
export interface RuntimeAddressing {
  hostFor(runtimeId: string): string;
  urlFor(runtimeId: string): string;
}

const PLACEHOLDER = '{runtime_id}';

/**
 * Reads RUNTIME_URL_PATTERN, RUNTIME_BASE_URL, RUNTIME_URL_SEPARATOR (default `-runtime.`) and
 * RUNTIME_DISABLE_SSL (default true). A pattern that disagrees with base URL + separator is refused
 * here, at start-up, with a message naming both values.
 */
export function loadRuntimeAddressing(env: NodeJS.ProcessEnv): RuntimeAddressing {
  const base = env.RUNTIME_BASE_URL?.trim();
  if (!base) throw new Error('RUNTIME_BASE_URL is required: the base domain that sandbox hosts sit under, e.g. agents.example.com');
  if (/^[a-z]+:\/\//i.test(base) || base.includes('/')) throw new Error(`RUNTIME_BASE_URL must be a host name (optionally with :port), got '${base}'`);
  const separator = env.RUNTIME_URL_SEPARATOR ?? '-runtime.';
  const disableSsl = parseBool(env.RUNTIME_DISABLE_SSL, true, 'RUNTIME_DISABLE_SSL');
  const expectedHost = `${PLACEHOLDER}${separator}${base}`;
  const pattern = env.RUNTIME_URL_PATTERN?.trim() || expectedHost;
  if (!pattern.includes(PLACEHOLDER)) throw new Error(`RUNTIME_URL_PATTERN '${pattern}' must contain the placeholder ${PLACEHOLDER}`);
  const schemeMatch = /^([a-z]+):\/\//i.exec(pattern);
  const patternHost = pattern.replace(/^[a-z]+:\/\//i, '').replace(/\/+$/, '');
  if (patternHost !== expectedHost) {
    throw new Error(
      `RUNTIME_URL_PATTERN '${pattern}' disagrees with RUNTIME_BASE_URL '${base}' and RUNTIME_URL_SEPARATOR '${separator}': the sandbox host would be '${expectedHost}'`,
    );
  }
  const scheme = disableSsl ? 'http' : 'https';
  if (schemeMatch && schemeMatch[1]!.toLowerCase() !== scheme) {
    throw new Error(`RUNTIME_URL_PATTERN '${pattern}' uses ${schemeMatch[1]} but RUNTIME_DISABLE_SSL=${disableSsl} serves ${scheme}`);
  }
  const hostFor = (runtimeId: string) => expectedHost.replace(PLACEHOLDER, runtimeId);
  return { hostFor, urlFor: (runtimeId) => `${scheme}://${hostFor(runtimeId)}` };
}

function parseBool(raw: string | undefined, fallback: boolean, name: string): boolean {
  if (raw === undefined || raw === '') return fallback;
  if (/^(true|1|yes)$/i.test(raw)) return true;
  if (/^(false|0|no)$/i.test(raw)) return false;
  throw new Error(`${name} must be true or false, got '${raw}'`);
}
