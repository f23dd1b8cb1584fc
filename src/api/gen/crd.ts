// Builds CustomResourceDefinition objects from the resource schemas in src/api.
import type { TSchema } from 'typebox';
import { GROUP, VERSION, type ResourceKind } from '../meta.ts';
import { ConversationKind } from '../conversation.ts';
import { SandboxConfigurationKind } from '../sandbox-configuration.ts';
import { SandboxKind } from '../sandbox.ts';
import { SandboxWarmPoolKind } from '../warm-pool.ts';
import { toStructuralSchema } from './structural-schema.ts';

interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'date' | 'boolean' | 'number';
  jsonPath: string;
  description?: string;
  priority?: number;
}

interface CrdSource {
  kind: ResourceKind;
  description: string;
  columns: PrinterColumn[];
  /** The scale subresource (`kubectl scale`), for kinds with replicas. */
  scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string };
}

const AGE: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

export const CRD_SOURCES: CrdSource[] = [
  {
    kind: SandboxKind as ResourceKind,
    description: 'A Sandbox is the execution environment of an agent: filesystem, processes, credentials and compute.',
    columns: [
      { name: 'Status', type: 'string', jsonPath: '.status.phase', description: 'Sandbox status (sandbox_status)' },
      { name: 'Conversations', type: 'integer', jsonPath: '.status.conversationCount' },
      { name: 'Last-Activity', type: 'date', jsonPath: '.status.lastActivityTime' },
      { name: 'URL', type: 'string', jsonPath: '.status.url', priority: 1 },
      AGE,
    ],
  },
  {
    kind: ConversationKind as ResourceKind,
    description: 'A Conversation is a user-visible agent session: messages, events, agent state, repository and usage.',
    columns: [
      { name: 'Start', type: 'string', jsonPath: '.status.startTask.status', description: 'Start task status' },
      { name: 'Sandbox', type: 'string', jsonPath: '.status.sandboxName' },
      { name: 'Execution', type: 'string', jsonPath: '.status.executionStatus' },
      { name: 'Owner', type: 'string', jsonPath: '.spec.owner', priority: 1 },
      AGE,
    ],
  },
  {
    kind: SandboxConfigurationKind as ResourceKind,
    description: "The installation's Sandbox Configuration (admin console): Idle Time, Deletion Time and sandbox capacity, with the audit trail of their changes. One object named default; the controller takes a change up at once.",
    columns: [
      { name: 'Idle-Time', type: 'integer', jsonPath: '.spec.idleTimeSeconds' },
      { name: 'Deletion-Time', type: 'integer', jsonPath: '.spec.deletionTimeSeconds' },
      { name: 'Capacity', type: 'integer', jsonPath: '.spec.sandboxCapacity' },
      AGE,
    ],
  },
  {
    kind: SandboxWarmPoolKind as ResourceKind,
    description: 'A SandboxWarmPool keeps a number of started, ready sandboxes of one template; a conversation start claims one when its sandbox would match the template.',
    columns: [
      { name: 'Ready', type: 'integer', jsonPath: '.status.readyReplicas', description: 'Unclaimed members that are RUNNING' },
      { name: 'Desired', type: 'integer', jsonPath: '.spec.replicas', description: 'Ready members to keep' },
      { name: 'Claimed', type: 'integer', jsonPath: '.status.claimed', priority: 1 },
      { name: 'Image', type: 'string', jsonPath: '.spec.template.image', priority: 1 },
      AGE,
    ],
    scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' },
  },
];

function withConditionListMap(schema: Record<string, unknown>): Record<string, unknown> {
  const props = schema.properties as Record<string, Record<string, unknown>> | undefined;
  const status = props?.status?.properties as Record<string, Record<string, unknown>> | undefined;
  if (status?.conditions) {
    status.conditions = { ...status.conditions, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] };
  }
  return schema;
}

export function buildCrd(source: CrdSource): Record<string, unknown> {
  const { kind } = source;
  const full = toStructuralSchema(JSON.parse(JSON.stringify(kind.schema as TSchema)) as Record<string, unknown>);
  const properties = full.properties as Record<string, unknown>;
  // The API server owns metadata validation; a CRD schema may only say it is an object.
  properties.metadata = { type: 'object' };
  const schema = withConditionListMap({
    type: 'object',
    description: source.description,
    properties,
    required: ['spec'],
  });
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${kind.plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: {
        kind: kind.kind,
        listKind: `${kind.kind}List`,
        plural: kind.plural,
        singular: kind.kind.toLowerCase(),
        shortNames: kind.shortNames ?? [],
        categories: ['agentyard'],
      },
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources: kind.hasStatus ? { status: {}, ...(source.scale ? { scale: source.scale } : {}) } : undefined,
          additionalPrinterColumns: source.columns,
          schema: { openAPIV3Schema: schema },
        },
      ],
    },
  };
}
