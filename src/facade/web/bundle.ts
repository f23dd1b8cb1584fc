// The web app's JavaScript (src/facade/web/app), bundled by esbuild from the installed
// dependencies at the first request and kept in memory: nothing is fetched at run time and no
// built file is committed or can go stale. A bundling error is not cached, so a fixed source is
// picked up by the next request.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { build } from 'esbuild';

export interface AppBundle {
  js: string;
  etag: string;
}

const ENTRY = join(import.meta.dirname, 'app', 'main.tsx');
let cached: Promise<AppBundle> | undefined;

export async function buildAppBundle(): Promise<AppBundle> {
  const out = await build({
    entryPoints: [ENTRY],
    bundle: true,
    write: false,
    format: 'esm',
    target: 'es2022',
    minify: true,
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    logLevel: 'silent',
    tsconfig: join(import.meta.dirname, 'app', 'tsconfig.json'),
  });
  const js = out.outputFiles[0]!.text;
  return { js, etag: `"${createHash('sha256').update(js).digest('base64url').slice(0, 22)}"` };
}

export function appBundle(): Promise<AppBundle> {
  if (!cached) {
    cached = buildAppBundle();
    cached.catch(() => {
      cached = undefined;
    });
  }
  return cached;
}
