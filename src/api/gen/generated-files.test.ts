import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { generatedFiles, GENERATED_MARKER } from './generated-files.ts';

const root = join(import.meta.dirname, '..', '..', '..');

describe('generated files', () => {
  for (const file of generatedFiles()) {
    it(`${file.path} matches its generator (run \`make crds\` after changing src/api)`, () => {
      expect(readFileSync(join(root, file.path), 'utf8')).toBe(file.content);
    });
  }

  it('marks every file as generated', () => {
    for (const file of generatedFiles()) {
      if (file.path.endsWith('.json')) expect(JSON.parse(file.content)['x-generated']).toBe(GENERATED_MARKER);
      else expect(file.content.startsWith(`# ${GENERATED_MARKER}`)).toBe(true);
    }
  });

  it('describes every route of the application API in OpenAPI 3.1', () => {
    const doc = JSON.parse(generatedFiles().find((f) => f.path === 'openapi.json')!.content);
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toContain('/api/v1/app-conversations/{conversation_id}/send-message');
    expect(doc.paths['/api/v1/app-conversations'].post.requestBody.content['application/json'].schema.properties).toHaveProperty('initial_message');
    expect(doc.paths['/api/v1/app-conversations/{conversation_id}/skills'].get.responses['200'].content['application/json'].schema.properties).toHaveProperty('skills');
  });

  it('produces structural CRD schemas: no const, no additionalProperties:false, typed enums', () => {
    for (const file of generatedFiles().filter((f) => f.path.startsWith('crds/'))) {
      const text = JSON.stringify(parse(file.content));
      expect(text).not.toContain('"const"');
      expect(text).not.toContain('"additionalProperties":false');
      expect(text).not.toContain('"anyOf"');
    }
    const sandbox = parse(generatedFiles().find((f) => f.path.includes('sandboxes'))!.content);
    const version = sandbox.spec.versions[0];
    expect(version.subresources).toEqual({ status: {} });
    expect(version.schema.openAPIV3Schema.properties.status.properties.phase).toEqual({
      type: 'string',
      enum: ['STARTING', 'RUNNING', 'PAUSED', 'ERROR', 'MISSING'],
    });
    expect(sandbox.spec.names.shortNames).toEqual(['sb']);
    expect(version.additionalPrinterColumns.map((c: { name: string }) => c.name)).toEqual([
      'Status',
      'Conversations',
      'Last-Activity',
      'URL',
      'Age',
    ]);
  });
});
