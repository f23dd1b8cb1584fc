// GET /settings/agent-schema and /settings/conversation-schema: the settings forms OpenHands' clients
// render (its SettingsSchema: sections of fields, each keyed by its dotted path in agent_settings or
// conversation_settings). They list what a user can set here and what it does (src/facade/llm-settings.ts);
// the rest of OpenHands' agent settings (tools, condenser, critic, ACP) is the installation's.
import type { SettingsField, SettingsForm } from '../api/app/llm-settings.ts';
import type { FacadeDeps } from './deps.ts';

type FieldSpec = Pick<SettingsField, 'key' | 'label' | 'description' | 'value_type' | 'default'> & Partial<Pick<SettingsField, 'prominence' | 'choices' | 'secret' | 'depends_on'>>;

function section(key: string, label: string, fields: FieldSpec[]): SettingsForm['sections'][number] {
  return {
    key,
    label,
    variant: null,
    fields: fields.map((f) => ({ prominence: 'major', depends_on: [], secret: false, choices: [], variant: null, ...f, section: key, section_label: label })),
  };
}

export function agentSettingsForm(d: FacadeDeps): SettingsForm {
  const model = d.modelUpstream?.model ?? null;
  return {
    model_name: 'AgentSettings',
    sections: [
      section('llm', 'LLM', [
        {
          key: 'llm.model',
          label: 'Model',
          description:
            "The model of your new conversations (a conversation's llm_model wins), served through this installation's endpoint and key. " +
            'Saved LLM profiles set it when activated.',
          value_type: 'string',
          default: model,
          prominence: 'critical',
          choices: model ? [{ label: model, value: model }] : [],
        },
      ]),
    ],
  };
}

export function conversationSettingsForm(): SettingsForm {
  return {
    model_name: 'ConversationSettings',
    sections: [
      section('general', 'General', [
        { key: 'max_iterations', label: 'Max iterations', description: 'Agent steps a run of your new conversations may take before it stops.', value_type: 'integer', default: 500 },
      ]),
      section('verification', 'Verification', [
        {
          key: 'confirmation_mode',
          label: 'Confirmation mode',
          description: 'Your new conversations wait for your approval (WAITING_FOR_CONFIRMATION) before risky actions, or every action without a security analyzer.',
          value_type: 'boolean',
          default: false,
          prominence: 'critical',
        },
        {
          key: 'security_analyzer',
          label: 'Security analyzer',
          description: 'llm: the model rates each action and only HIGH or UNKNOWN risk waits for you; none: every action waits.',
          value_type: 'string',
          default: 'llm',
          depends_on: ['confirmation_mode'],
          choices: [
            { label: 'llm', value: 'llm' },
            { label: 'none', value: 'none' },
          ],
        },
      ]),
    ],
  };
}
