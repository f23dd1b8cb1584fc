// FsObjectStore: objects as files under one directory (embedded default: <dataDir>/objects).
// A write goes to a temporary file first and is renamed into place, so a reader (or a crash) never
// sees half an object. Directories 0700, files 0600: the data directory's owner only.
import { createReadStream } from 'node:fs';
import { copyFile, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { dirname, join, relative, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { checkKey, checkPrefix } from './keys.ts';
import type { ObjectStore, StoredObject } from './types.ts';

const isMissing = (err: unknown) => (err as NodeJS.ErrnoException).code === 'ENOENT';

export class FsObjectStore implements ObjectStore {
  readonly kind = 'filesystem' as const;
  readonly #root: string;

  constructor(root: string) {
    this.#root = root;
  }

  get location(): string {
    return this.#root;
  }

  async init(): Promise<void> {
    await mkdir(this.#root, { recursive: true, mode: 0o700 });
  }

  #path(key: string): string {
    return join(this.#root, ...checkKey(key).split('/'));
  }

  async #place(key: string, write: (tmp: string) => Promise<void>): Promise<void> {
    const target = this.#path(key);
    await mkdir(dirname(target), { recursive: true, mode: 0o700 });
    const tmp = `${target}.${randomBytes(6).toString('hex')}.partial`;
    try {
      await write(tmp);
      await rename(tmp, target);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }

  put(key: string, body: Uint8Array | string): Promise<void> {
    return this.#place(key, (tmp) => writeFile(tmp, body, { mode: 0o600 }));
  }

  putFile(key: string, path: string): Promise<void> {
    return this.#place(key, (tmp) => copyFile(path, tmp));
  }

  async get(key: string): Promise<Buffer | undefined> {
    try {
      return await readFile(this.#path(key));
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
  }

  async open(key: string): Promise<Readable | undefined> {
    const path = this.#path(key);
    try {
      if (!(await stat(path)).isFile()) return undefined;
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
    return createReadStream(path);
  }

  async list(prefix: string): Promise<StoredObject[]> {
    // The directory the prefix names, or the one holding its last partial segment.
    const dir = prefix.endsWith('/') ? this.#path(checkPrefix(prefix).slice(0, -1)) : prefix.includes('/') ? this.#path(prefix.slice(0, prefix.lastIndexOf('/'))) : this.#root;
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true, recursive: true });
    } catch (err) {
      if (isMissing(err)) return [];
      throw err;
    }
    const out: StoredObject[] = [];
    for (const e of entries) {
      if (!e.isFile() || e.name.endsWith('.partial')) continue;
      const path = join(e.parentPath, e.name);
      const key = relative(this.#root, path).split(sep).join('/');
      if (key.startsWith(prefix)) out.push({ key, size: (await stat(path)).size });
    }
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async delete(key: string): Promise<void> {
    await rm(this.#path(key), { force: true });
  }

  async deletePrefix(prefix: string): Promise<number> {
    const n = (await this.list(checkPrefix(prefix))).length;
    await rm(this.#path(prefix.slice(0, -1)), { recursive: true, force: true });
    return n;
  }
}
