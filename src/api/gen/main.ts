// `npm run gen`: writes every generated file under the repository root.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generatedFiles } from './generated-files.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
for (const file of generatedFiles()) {
  const target = join(root, file.path);
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, file.content);
  console.log(`wrote ${file.path}`);
}
