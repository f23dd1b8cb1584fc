// Both published OpenAPI documents carry the versioned `kind` discriminator mapping (spec part 9
// rule 3) on every `kind` union: each mapping covers every kind of its union, each entry resolves
// to a component schema of that kind, and no `kind` union is left in the documents without one.
// That the keys are the ones the real OpenHands document uses is checked in e2e/parity.
import { describe, expect, it } from 'vitest';
import { discriminatorKey, KIND_SCHEMA_VERSION, KIND_UNIONS, unionKinds } from './discriminator.ts';
import { agentServerOpenApiDocument } from './agent-server-openapi.ts';
import { generatedFiles } from './generated-files.ts';

type Json = Record<string, any>;

const documents: [string, Json, string[]][] = [
  ['agent server', agentServerOpenApiDocument('test'), Object.keys(KIND_UNIONS)],
  ['application API (openapi.json)', JSON.parse(generatedFiles().find((f) => f.path === 'openapi.json')!.content), ['Event', 'Action', 'Observation', 'ToolDefinition', 'ConfirmationPolicy']],
];

/** Every `anyOf`/`oneOf` under `node` whose members are all objects with a `kind` literal. */
function inlineKindUnions(node: unknown, path: string, out: string[]): string[] {
  if (Array.isArray(node)) node.forEach((n, i) => inlineKindUnions(n, `${path}/${i}`, out));
  else if (node && typeof node === 'object') {
    const o = node as Json;
    for (const key of ['anyOf', 'oneOf']) {
      const members = o[key];
      if (Array.isArray(members) && members.length > 1 && members.every((m) => m?.properties?.kind?.const !== undefined)) out.push(`${path}/${key}`);
    }
    for (const [k, v] of Object.entries(o)) inlineKindUnions(v, `${path}/${k}`, out);
  }
  return out;
}

describe.each(documents)('the %s document', (_name, doc, unions) => {
  const schemas = doc.components.schemas as Json;

  it.each(unions)('publishes %s with a versioned kind mapping that covers every kind and resolves', (union) => {
    const kinds = unionKinds(KIND_UNIONS[union]!);
    const published = schemas[union];
    expect(published.discriminator.propertyName).toBe('kind');
    const mapping = published.discriminator.mapping as Record<string, string>;
    expect(kinds.length).toBeGreaterThan(1);
    expect(Object.keys(mapping).sort()).toEqual(kinds.map(discriminatorKey).sort());
    for (const [key, ref] of Object.entries(mapping)) {
      expect(key).toMatch(new RegExp(`^openhands__\\w+-Output__${KIND_SCHEMA_VERSION}$`));
      const name = ref.replace(/^#\/components\/schemas\//, '');
      expect(ref).toBe(`#/components/schemas/${name}`);
      expect(schemas[name], `${key} -> ${ref}`).toBeDefined();
      expect(schemas[name].properties.kind.const).toBe(name);
      expect(key.endsWith(`__${name}-Output__${KIND_SCHEMA_VERSION}`)).toBe(true);
    }
    expect(published.oneOf.map((r: Json) => r.$ref).sort()).toEqual(Object.values(mapping).sort());
  });

  it('leaves no kind union without its discriminator', () => {
    expect(inlineKindUnions(doc, '', [])).toEqual([]);
  });

  it('references the unions where events, actions, observations and tools appear', () => {
    expect(schemas.ActionEvent.properties.action.anyOf).toContainEqual({ $ref: '#/components/schemas/Action' });
    expect(schemas.ObservationEvent.properties.observation).toEqual({ $ref: '#/components/schemas/Observation' });
    expect(schemas.SystemPromptEvent.properties.tools.items).toEqual({ $ref: '#/components/schemas/ToolDefinition' });
  });
});

it('names a kind by its OpenHands class path and the schema version', () => {
  expect(discriminatorKey('MessageEvent')).toBe('openhands__sdk__event__llm_convertible__message__MessageEvent-Output__1');
  expect(discriminatorKey('ListDirectoryAction')).toBe('openhands__tools__gemini__list_directory__definition__ListDirectoryAction-Output__1');
  expect(discriminatorKey('MCPToolDefinition')).toBe('openhands__sdk__mcp__tool__MCPToolDefinition-Output__1');
});
