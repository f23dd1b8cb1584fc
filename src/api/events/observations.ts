// Observation kinds carried in ObservationEvent.observation (spec part 2, "Observation kinds").
// The spec leaves their fields "not shown"; they follow the OpenHands wire (agent-server 1.44 schema).
import Type, { type Static, type TProperties } from 'typebox';
import { EditorCommand, TaskItem } from './actions.ts';
import { kinded, Nullable } from './common.ts';
import { MessageContent } from './content.ts';

/** Fields every observation has: what the model sees (`content`) and whether the tool failed. */
function observation<K extends string, P extends TProperties>(kind: K, props: P) {
  return kinded(kind, {
    content: Type.Optional(Type.Array(MessageContent, { default: [] })),
    is_error: Type.Optional(Type.Boolean({ default: false })),
    ...props,
  });
}

const editorObservationFields = {
  command: EditorCommand,
  path: Nullable(Type.String()),
  prev_exist: Type.Optional(Type.Boolean({ default: true })),
  /** Whole file before and after the edit. */
  old_content: Nullable(Type.String()),
  new_content: Nullable(Type.String()),
};

/** Shell state after a terminal command (OpenHands `CmdOutputMetadata`). */
export const CmdOutputMetadata = Type.Object(
  {
    exit_code: Type.Optional(Type.Integer({ default: -1 })),
    pid: Type.Optional(Type.Integer({ default: -1 })),
    username: Nullable(Type.String()),
    hostname: Nullable(Type.String()),
    working_dir: Nullable(Type.String()),
    py_interpreter_path: Nullable(Type.String()),
    prefix: Type.Optional(Type.String({ default: '' })),
    suffix: Type.Optional(Type.String({ default: '' })),
  },
  { additionalProperties: false },
);
export type CmdOutputMetadata = Static<typeof CmdOutputMetadata>;

export const FileEntry = Type.Object(
  {
    name: Type.String(),
    path: Type.String(),
    is_directory: Type.Boolean(),
    size: Type.Integer({ minimum: 0 }),
    /** ISO timestamp. */
    modified_time: Type.String(),
  },
  { additionalProperties: false },
);
export type FileEntry = Static<typeof FileEntry>;

export const MCPToolObservation = observation('MCPToolObservation', { tool_name: Type.String() });
export const FinishObservation = observation('FinishObservation', {});
export const InvokeSkillObservation = observation('InvokeSkillObservation', { skill_name: Type.String() });
/** What route_task_to_model did: the class it matched, the LLM profile it switched to and that profile's model (null when it failed before). */
export const ClassifyAndSwitchLLMObservation = observation('ClassifyAndSwitchLLMObservation', {
  chosen_class: Nullable(Type.String()),
  model: Nullable(Type.String()),
  active_model: Nullable(Type.String()),
});
export const SwitchLLMObservation = observation('SwitchLLMObservation', {
  profile_name: Type.String(),
  active_model: Nullable(Type.String()),
  reason: Nullable(Type.String()),
});
export const ThinkObservation = observation('ThinkObservation', {});
export const VisionInspectObservation = observation('VisionInspectObservation', {
  image_index: Type.Integer(),
  question: Type.String(),
  answer: Nullable(Type.String()),
  profile_name: Nullable(Type.String()),
  model: Nullable(Type.String()),
  base_url: Nullable(Type.String()),
});
export const ClientToolObservation = observation('ClientToolObservation', {});
export const AskOracleObservation = observation('AskOracleObservation', {});
export const BrowserObservation = observation('BrowserObservation', {
  /** Base64 PNG. */
  screenshot_data: Nullable(Type.String()),
  full_output_save_dir: Nullable(Type.String()),
});
export const DelegateObservation = observation('DelegateObservation', {
  command: Type.Union([Type.Literal('spawn'), Type.Literal('delegate')]),
});
export const FileEditorObservation = observation('FileEditorObservation', editorObservationFields);
export const PlanningFileEditorObservation = observation('PlanningFileEditorObservation', editorObservationFields);
export const EditObservation = observation('EditObservation', {
  file_path: Nullable(Type.String()),
  is_new_file: Type.Optional(Type.Boolean({ default: false })),
  replacements_made: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
  old_content: Nullable(Type.String()),
  new_content: Nullable(Type.String()),
});
export const ListDirectoryObservation = observation('ListDirectoryObservation', {
  dir_path: Nullable(Type.String()),
  entries: Type.Optional(Type.Array(FileEntry, { default: [] })),
  total_count: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
  is_truncated: Type.Optional(Type.Boolean({ default: false })),
});
export const ReadFileObservation = observation('ReadFileObservation', {
  file_path: Type.String(),
  file_content: Type.Optional(Type.String({ default: '' })),
  is_truncated: Type.Optional(Type.Boolean({ default: false })),
  /** [first, last] line numbers shown, 1-based. */
  lines_shown: Nullable(Type.Tuple([Type.Integer(), Type.Integer()])),
  total_lines: Nullable(Type.Integer({ minimum: 0 })),
});
export const WriteFileObservation = observation('WriteFileObservation', {
  file_path: Nullable(Type.String()),
  is_new_file: Type.Optional(Type.Boolean({ default: false })),
  old_content: Nullable(Type.String()),
  new_content: Nullable(Type.String()),
});
export const GlobObservation = observation('GlobObservation', {
  files: Type.Array(Type.String()),
  pattern: Type.String(),
  search_path: Type.String(),
  truncated: Type.Optional(Type.Boolean({ default: false })),
});
export const GrepObservation = observation('GrepObservation', {
  matches: Type.Array(Type.String()),
  pattern: Type.String(),
  search_path: Type.String(),
  include_pattern: Nullable(Type.String()),
  truncated: Type.Optional(Type.Boolean({ default: false })),
});
export const TaskObservation = observation('TaskObservation', {
  task_id: Type.String(),
  subagent: Type.String(),
  status: Type.String(),
});
export const TaskTrackerObservation = observation('TaskTrackerObservation', {
  command: Type.Union([Type.Literal('view'), Type.Literal('plan')]),
  task_list: Type.Optional(Type.Array(TaskItem, { default: [] })),
});
export const TerminalObservation = observation('TerminalObservation', {
  /** The command that ran; null when the observation is not tied to one (e.g. a reset). */
  command: Type.Union([Type.String(), Type.Null()]),
  exit_code: Nullable(Type.Integer()),
  timeout: Type.Optional(Type.Boolean({ default: false })),
  metadata: Type.Optional(CmdOutputMetadata),
  full_output_save_dir: Nullable(Type.String()),
});
export const WorkflowObservation = observation('WorkflowObservation', {
  name: Type.String(),
  status: Type.Union([Type.Literal('completed'), Type.Literal('error')]),
});

export const OBSERVATION_SCHEMAS = [
  MCPToolObservation,
  ClassifyAndSwitchLLMObservation,
  FinishObservation,
  InvokeSkillObservation,
  SwitchLLMObservation,
  ThinkObservation,
  VisionInspectObservation,
  ClientToolObservation,
  AskOracleObservation,
  BrowserObservation,
  DelegateObservation,
  FileEditorObservation,
  EditObservation,
  ListDirectoryObservation,
  ReadFileObservation,
  WriteFileObservation,
  GlobObservation,
  GrepObservation,
  PlanningFileEditorObservation,
  TaskObservation,
  TaskTrackerObservation,
  TerminalObservation,
  WorkflowObservation,
] as const;

export const Observation = Type.Union([...OBSERVATION_SCHEMAS]);
export type Observation = Static<typeof Observation>;
export type ObservationKind = Observation['kind'];

export type MCPToolObservation = Static<typeof MCPToolObservation>;
export type FinishObservation = Static<typeof FinishObservation>;
export type InvokeSkillObservation = Static<typeof InvokeSkillObservation>;
export type ClassifyAndSwitchLLMObservation = Static<typeof ClassifyAndSwitchLLMObservation>;
export type SwitchLLMObservation = Static<typeof SwitchLLMObservation>;
export type ThinkObservation = Static<typeof ThinkObservation>;
export type VisionInspectObservation = Static<typeof VisionInspectObservation>;
export type ClientToolObservation = Static<typeof ClientToolObservation>;
export type AskOracleObservation = Static<typeof AskOracleObservation>;
export type BrowserObservation = Static<typeof BrowserObservation>;
export type DelegateObservation = Static<typeof DelegateObservation>;
export type FileEditorObservation = Static<typeof FileEditorObservation>;
export type PlanningFileEditorObservation = Static<typeof PlanningFileEditorObservation>;
export type EditObservation = Static<typeof EditObservation>;
export type ListDirectoryObservation = Static<typeof ListDirectoryObservation>;
export type ReadFileObservation = Static<typeof ReadFileObservation>;
export type WriteFileObservation = Static<typeof WriteFileObservation>;
export type GlobObservation = Static<typeof GlobObservation>;
export type GrepObservation = Static<typeof GrepObservation>;
export type TaskObservation = Static<typeof TaskObservation>;
export type TaskTrackerObservation = Static<typeof TaskTrackerObservation>;
export type TerminalObservation = Static<typeof TerminalObservation>;
export type WorkflowObservation = Static<typeof WorkflowObservation>;
