// Action kinds carried in ActionEvent.action (spec part 2, "Action kinds").
// Fields the spec marks "not shown" follow the OpenHands wire (agent-server 1.44 schema).
import Type, { type Static } from 'typebox';
import { JsonObject, kinded, Nullable, STRICT } from './common.ts';

const NonNegativeInt = Type.Integer({ minimum: 0 });
/** Browser tab ids are 4 characters (spec part 8). */
const TabId = Type.String({ minLength: 4, maxLength: 4 });
export const EditorCommand = Type.Union([
  Type.Literal('view'),
  Type.Literal('create'),
  Type.Literal('str_replace'),
  Type.Literal('insert'),
  Type.Literal('undo_edit'),
]);
export type EditorCommand = Static<typeof EditorCommand>;

const editorFields = {
  command: EditorCommand,
  /** Absolute path. */
  path: Type.String(),
  /** Required for `create`. */
  file_text: Nullable(Type.String()),
  /** Required for `str_replace`. */
  old_str: Nullable(Type.String()),
  /** Optional for `str_replace`, required for `insert`. */
  new_str: Nullable(Type.String()),
  /** Required for `insert`; the text goes after this line. */
  insert_line: Nullable(NonNegativeInt),
  view_range: Nullable(Type.Array(Type.Integer())),
};

export const MCPToolAction = kinded('MCPToolAction', {
  /** Free-form; validated later against the MCP tool's input schema. */
  data: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { default: {} })),
});
export const FinishAction = kinded('FinishAction', { message: Type.String() });
export const ThinkAction = kinded('ThinkAction', { thought: Type.String() });
export const InvokeSkillAction = kinded('InvokeSkillAction', { name: Type.String() });
/** route_task_to_model (OpenHands' ClassifyAndSwitchLLMTool): no arguments; the classifier reads the conversation. */
export const ClassifyAndSwitchLLMAction = kinded('ClassifyAndSwitchLLMAction', {});
export const SwitchLLMAction = kinded('SwitchLLMAction', { profile_name: Type.String(), reason: Type.String() });
export const VisionInspectAction = kinded('VisionInspectAction', {
  image_index: Type.Integer(),
  question: Type.String(),
  profile_name: Nullable(Type.String()),
});
export const AskOracleAction = kinded('AskOracleAction', {
  question: Type.String(),
  context: Nullable(Type.String()),
});

export const BrowserAction = kinded('BrowserAction', {});
export const BrowserClickAction = kinded('BrowserClickAction', {
  index: NonNegativeInt,
  new_tab: Type.Optional(Type.Boolean({ default: false })),
});
export const BrowserCloseTabAction = kinded('BrowserCloseTabAction', { tab_id: TabId });
export const BrowserGetContentAction = kinded('BrowserGetContentAction', {
  extract_links: Type.Optional(Type.Boolean({ default: false })),
  start_from_char: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
});
export const BrowserGetStateAction = kinded('BrowserGetStateAction', {
  include_screenshot: Type.Optional(Type.Boolean({ default: false })),
});
export const BrowserGetStorageAction = kinded('BrowserGetStorageAction', {});
export const BrowserGoBackAction = kinded('BrowserGoBackAction', {});
export const BrowserListTabsAction = kinded('BrowserListTabsAction', {});
export const BrowserNavigateAction = kinded('BrowserNavigateAction', {
  url: Type.String(),
  new_tab: Type.Optional(Type.Boolean({ default: false })),
});
export const BrowserScrollAction = kinded('BrowserScrollAction', {
  direction: Type.Optional(Type.Union([Type.Literal('up'), Type.Literal('down')], { default: 'down' })),
});
export const BrowserSetStorageAction = kinded('BrowserSetStorageAction', {
  /** `{cookies, origins}` as returned by BrowserGetStorageAction. */
  storage_state: JsonObject,
});
export const BrowserStartRecordingAction = kinded('BrowserStartRecordingAction', {});
export const BrowserStopRecordingAction = kinded('BrowserStopRecordingAction', {});
export const BrowserSwitchTabAction = kinded('BrowserSwitchTabAction', { tab_id: TabId });
export const BrowserTypeAction = kinded('BrowserTypeAction', { index: NonNegativeInt, text: Type.String() });

export const DelegateAction = kinded('DelegateAction', {
  command: Type.Union([Type.Literal('spawn'), Type.Literal('delegate')]),
  ids: Nullable(Type.Array(Type.String())),
  agent_types: Nullable(Type.Array(Type.String())),
  tasks: Nullable(Type.Record(Type.String(), Type.String())),
});

export const FileEditorAction = kinded('FileEditorAction', editorFields);
export const PlanningFileEditorAction = kinded('PlanningFileEditorAction', editorFields);
export const EditAction = kinded('EditAction', {
  file_path: Type.String(),
  old_string: Type.String(),
  new_string: Type.String(),
  expected_replacements: Type.Optional(Type.Integer({ minimum: 0, default: 1 })),
});
export const ListDirectoryAction = kinded('ListDirectoryAction', {
  dir_path: Type.Optional(Type.String({ default: '.' })),
  recursive: Type.Optional(Type.Boolean({ default: false })),
});
export const ReadFileAction = kinded('ReadFileAction', {
  file_path: Type.String(),
  offset: Nullable(NonNegativeInt),
  limit: Nullable(Type.Integer({ minimum: 1 })),
});
export const WriteFileAction = kinded('WriteFileAction', { file_path: Type.String(), content: Type.String() });
export const GlobAction = kinded('GlobAction', { pattern: Type.String(), path: Nullable(Type.String()) });
export const GrepAction = kinded('GrepAction', {
  pattern: Type.String(),
  path: Nullable(Type.String()),
  include: Nullable(Type.String()),
});

export const TaskAction = kinded('TaskAction', {
  prompt: Type.String(),
  description: Nullable(Type.String()),
  subagent_type: Type.Optional(Type.String({ default: 'general-purpose' })),
  resume: Nullable(Type.String()),
  /** Hidden from the LLM-facing schema but part of the model. */
  max_turns: Nullable(Type.Integer({ minimum: 1 })),
});

export const TaskItem = Type.Object(
  {
    title: Type.String(),
    notes: Type.Optional(Type.String({ default: '' })),
    status: Type.Optional(
      Type.Union([Type.Literal('todo'), Type.Literal('in_progress'), Type.Literal('done')], { default: 'todo' }),
    ),
  },
  STRICT,
);
export type TaskItem = Static<typeof TaskItem>;

export const TaskTrackerAction = kinded('TaskTrackerAction', {
  command: Type.Optional(Type.Union([Type.Literal('view'), Type.Literal('plan')], { default: 'view' })),
  task_list: Type.Optional(Type.Array(TaskItem, { default: [] })),
});

export const TerminalAction = kinded('TerminalAction', {
  command: Type.String(),
  /** True when `command` is input to a running process rather than a new command. */
  is_input: Type.Optional(Type.Boolean({ default: false })),
  /** Seconds; null means the tool's default soft timeout. */
  timeout: Nullable(Type.Number({ minimum: 0 })),
  /** Restart the terminal session before running. */
  reset: Type.Optional(Type.Boolean({ default: false })),
});

export const WorkflowAction = kinded('WorkflowAction', {
  name: Type.String(),
  script: Type.String(),
  max_concurrency: Type.Optional(Type.Integer({ minimum: 1, maximum: 64, default: 8 })),
});

/** Every action kind, in the order of the OpenHands discriminator mapping. */
export const ACTION_SCHEMAS = [
  MCPToolAction,
  ClassifyAndSwitchLLMAction,
  FinishAction,
  InvokeSkillAction,
  SwitchLLMAction,
  ThinkAction,
  VisionInspectAction,
  AskOracleAction,
  BrowserAction,
  BrowserClickAction,
  BrowserCloseTabAction,
  BrowserGetContentAction,
  BrowserGetStateAction,
  BrowserGetStorageAction,
  BrowserGoBackAction,
  BrowserListTabsAction,
  BrowserNavigateAction,
  BrowserScrollAction,
  BrowserSetStorageAction,
  BrowserStartRecordingAction,
  BrowserStopRecordingAction,
  BrowserSwitchTabAction,
  BrowserTypeAction,
  DelegateAction,
  FileEditorAction,
  EditAction,
  ListDirectoryAction,
  ReadFileAction,
  WriteFileAction,
  GlobAction,
  GrepAction,
  PlanningFileEditorAction,
  TaskAction,
  TaskTrackerAction,
  TerminalAction,
  WorkflowAction,
] as const;

export const Action = Type.Union([...ACTION_SCHEMAS]);
export type Action = Static<typeof Action>;
export type ActionKind = Action['kind'];

export type MCPToolAction = Static<typeof MCPToolAction>;
export type FinishAction = Static<typeof FinishAction>;
export type ThinkAction = Static<typeof ThinkAction>;
export type InvokeSkillAction = Static<typeof InvokeSkillAction>;
export type ClassifyAndSwitchLLMAction = Static<typeof ClassifyAndSwitchLLMAction>;
export type SwitchLLMAction = Static<typeof SwitchLLMAction>;
export type VisionInspectAction = Static<typeof VisionInspectAction>;
export type AskOracleAction = Static<typeof AskOracleAction>;
export type BrowserAction = Static<typeof BrowserAction>;
export type BrowserClickAction = Static<typeof BrowserClickAction>;
export type BrowserCloseTabAction = Static<typeof BrowserCloseTabAction>;
export type BrowserGetContentAction = Static<typeof BrowserGetContentAction>;
export type BrowserGetStateAction = Static<typeof BrowserGetStateAction>;
export type BrowserGetStorageAction = Static<typeof BrowserGetStorageAction>;
export type BrowserGoBackAction = Static<typeof BrowserGoBackAction>;
export type BrowserListTabsAction = Static<typeof BrowserListTabsAction>;
export type BrowserNavigateAction = Static<typeof BrowserNavigateAction>;
export type BrowserScrollAction = Static<typeof BrowserScrollAction>;
export type BrowserSetStorageAction = Static<typeof BrowserSetStorageAction>;
export type BrowserStartRecordingAction = Static<typeof BrowserStartRecordingAction>;
export type BrowserStopRecordingAction = Static<typeof BrowserStopRecordingAction>;
export type BrowserSwitchTabAction = Static<typeof BrowserSwitchTabAction>;
export type BrowserTypeAction = Static<typeof BrowserTypeAction>;
export type DelegateAction = Static<typeof DelegateAction>;
export type FileEditorAction = Static<typeof FileEditorAction>;
export type PlanningFileEditorAction = Static<typeof PlanningFileEditorAction>;
export type EditAction = Static<typeof EditAction>;
export type ListDirectoryAction = Static<typeof ListDirectoryAction>;
export type ReadFileAction = Static<typeof ReadFileAction>;
export type WriteFileAction = Static<typeof WriteFileAction>;
export type GlobAction = Static<typeof GlobAction>;
export type GrepAction = Static<typeof GrepAction>;
export type TaskAction = Static<typeof TaskAction>;
export type TaskTrackerAction = Static<typeof TaskTrackerAction>;
export type TerminalAction = Static<typeof TerminalAction>;
export type WorkflowAction = Static<typeof WorkflowAction>;
