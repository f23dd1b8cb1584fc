// API keys as both app stores keep them: only a sha256 hash and a short display prefix.
import { hash, randomBytes, randomUUID } from 'node:crypto';

const KEY_PREFIX = 'ay_';
const DISPLAY_PREFIX_LENGTH = KEY_PREFIX.length + 6;

export function hashKey(key: string): string {
  // One-shot: every authenticated request hashes its key, and a Hash object cost more than the digest.
  return hash('sha256', key, 'hex');
}

export function newApiKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
}

export function displayPrefix(key: string): string {
  return key.slice(0, DISPLAY_PREFIX_LENGTH);
}

export function newUserId(): string {
  return randomUUID().replaceAll('-', '');
}
