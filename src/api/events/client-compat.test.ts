// Wire compatibility with the published OpenHands TypeScript client (@openhands/typescript-client,
// generated from agent-server 1.44). The example literals below are typed with the client's own
// types, so `tsc` checks them against the client; the tests then validate them with our schemas.
// Type-level assertions check the other direction: what we emit is assignable to the client's types.
//
// The client's generated unions (`Action`, `Observation`, `ToolDefinition`, `Event`) intersect each
// member with a namespaced `kind` (`openhands__...-Output__1`) and so collapse to `never`; we rebuild
// them from the per-kind types the client exports.
import type * as OH from '../../../node_modules/@openhands/typescript-client/dist/generated/agent-server-schema.js';
import { describe, expect, it } from 'vitest';
import type { Action } from './actions.ts';
import type { Event, EventKind } from './events.ts';
import { EXAMPLE_EVENTS } from './examples.ts';
import { parseEvent } from './parse.ts';
import type { Observation } from './observations.ts';
import type { ToolDefinition } from './tools.ts';

// The published TypeScript client predates 1.58's model-routing tool: its three kinds, as the 1.58
// agent server's OpenAPI document describes them.
type RouteAction = { kind: 'ClassifyAndSwitchLLMAction' };
type RouteObservation = Omit<OH.SwitchLlmObservation, 'kind' | 'profile_name' | 'reason'> & { kind: 'ClassifyAndSwitchLLMObservation'; chosen_class?: string | null; model?: string | null };
type RouteTool = Omit<OH.SwitchLlmTool, 'kind'> & { kind: 'ClassifyAndSwitchLLMTool' };

type ClientAction =
  | RouteAction
  | OH.McpToolAction | OH.FinishAction | OH.InvokeSkillAction | OH.SwitchLlmAction | OH.ThinkAction
  | OH.VisionInspectAction | OH.AskOracleAction | OH.BrowserAction | OH.BrowserClickAction
  | OH.BrowserCloseTabAction | OH.BrowserGetContentAction | OH.BrowserGetStateAction
  | OH.BrowserGetStorageAction | OH.BrowserGoBackAction | OH.BrowserListTabsAction
  | OH.BrowserNavigateAction | OH.BrowserScrollAction | OH.BrowserSetStorageAction
  | OH.BrowserStartRecordingAction | OH.BrowserStopRecordingAction | OH.BrowserSwitchTabAction
  | OH.BrowserTypeAction | OH.DelegateAction | OH.FileEditorAction | OH.EditAction
  | OH.ListDirectoryAction | OH.ReadFileAction | OH.WriteFileAction | OH.GlobAction | OH.GrepAction
  | OH.PlanningFileEditorAction | OH.TaskAction | OH.TaskTrackerAction | OH.TerminalAction
  | OH.WorkflowAction;

type ClientObservation =
  | RouteObservation
  | OH.McpToolObservation | OH.FinishObservation | OH.InvokeSkillObservation | OH.SwitchLlmObservation
  | OH.ThinkObservation | OH.VisionInspectObservation | OH.ClientToolObservation | OH.AskOracleObservation
  | OH.BrowserObservation | OH.DelegateObservation | OH.FileEditorObservation | OH.EditObservation
  | OH.ListDirectoryObservation | OH.ReadFileObservation | OH.WriteFileObservation | OH.GlobObservation
  | OH.GrepObservation | OH.PlanningFileEditorObservation | OH.TaskObservation
  | OH.TaskTrackerObservation | OH.TerminalObservation | OH.WorkflowObservation;

type ClientTool =
  | RouteTool
  | OH.McpToolDefinition | OH.FinishTool | OH.InvokeSkillTool | OH.SwitchLlmTool | OH.ThinkTool
  | OH.VisionInspectTool | OH.ClientTool | OH.AskOracleTool | OH.BrowserClickTool | OH.BrowserCloseTabTool
  | OH.BrowserGetContentTool | OH.BrowserGetStateTool | OH.BrowserGetStorageTool | OH.BrowserGoBackTool
  | OH.BrowserListTabsTool | OH.BrowserNavigateTool | OH.BrowserScrollTool | OH.BrowserSetStorageTool
  | OH.BrowserStartRecordingTool | OH.BrowserStopRecordingTool | OH.BrowserSwitchTabTool
  | OH.BrowserToolSet | OH.BrowserTypeTool | OH.FileEditorTool | OH.EditTool | OH.ListDirectoryTool
  | OH.ReadFileTool | OH.WriteFileTool | OH.GlobTool | OH.GrepTool | OH.PlanningFileEditorTool
  | OH.TaskTool | OH.TaskToolSet | OH.TaskTrackerTool | OH.TerminalTool | OH.WorkflowTool
  | OH.WorkflowToolSet;

type ClientActionEvent = Omit<OH.ActionEvent, 'action'> & { action?: ClientAction | null };
type ClientObservationEvent = Omit<OH.ObservationEvent, 'observation'> & { observation: ClientObservation };
type ClientSystemPromptEvent = Omit<OH.SystemPromptEvent, 'tools'> & { tools: ClientTool[] };

/** The TypeScript client's schema predates 1.58's SecurityAnalysisEvent; this is its shape in 1.58.2 (`event/security.py`). */
interface ClientSecurityAnalysisEvent {
  kind: 'SecurityAnalysisEvent';
  id?: string;
  timestamp?: string;
  source?: 'agent' | 'user' | 'environment' | 'hook';
  analyzer: string;
  policy: string;
  risks: { [action_id: string]: 'UNKNOWN' | 'LOW' | 'MEDIUM' | 'HIGH' };
  details?: { [action_id: string]: { [key: string]: unknown } };
}

interface ClientEventByKind {
  Condensation: OH.Condensation;
  CondensationRequest: OH.CondensationRequest;
  CondensationSummaryEvent: OH.CondensationSummaryEvent;
  ConversationErrorEvent: OH.ConversationErrorEvent;
  ConversationStateUpdateEvent: OH.ConversationStateUpdateEvent;
  LLMCompletionLogEvent: OH.LlmCompletionLogEvent;
  ActionEvent: ClientActionEvent;
  MessageEvent: OH.MessageEvent;
  AgentErrorEvent: OH.AgentErrorEvent;
  ObservationEvent: ClientObservationEvent;
  UserRejectObservation: OH.UserRejectObservation;
  SystemPromptEvent: ClientSystemPromptEvent;
  TokenEvent: OH.TokenEvent;
  SecurityAnalysisEvent: ClientSecurityAnalysisEvent;
  PauseEvent: OH.PauseEvent;
  InterruptEvent: OH.InterruptEvent;
  HookExecutionEvent: OH.HookExecutionEvent;
  ACPToolCallEvent: OH.AcpToolCallEvent;
}

// ---- Type-level: both directions. Any `false` fails `tsc`. ----
// One line per kind: relating the 20-40 member unions as a whole is not resolved reliably by tsc.
type Extends<A, B> = [A] extends [B] ? true : false;
type Assert<T extends true> = T;
/** Ours → client, and client → ours (we require id and timestamp; we always emit both). */
type Both<K extends EventKind> = Extends<Extract<Event, { kind: K }>, ClientEventByKind[K]> extends true
  ? Extends<ClientEventByKind[K] & { id: string; timestamp: string }, Extract<Event, { kind: K }>>
  : false;
type BothWays<Ours, Theirs> = Extends<Ours, Theirs> extends true ? Extends<Theirs, Ours> : false;

export type _EventChecks = [
  Assert<Both<'Condensation'>>,
  Assert<Both<'CondensationRequest'>>,
  Assert<Both<'CondensationSummaryEvent'>>,
  Assert<Both<'ConversationErrorEvent'>>,
  Assert<Both<'ConversationStateUpdateEvent'>>,
  Assert<Both<'LLMCompletionLogEvent'>>,
  Assert<Both<'ActionEvent'>>,
  Assert<Both<'MessageEvent'>>,
  Assert<Both<'AgentErrorEvent'>>,
  Assert<Both<'ObservationEvent'>>,
  Assert<Both<'UserRejectObservation'>>,
  Assert<Both<'SystemPromptEvent'>>,
  Assert<Both<'TokenEvent'>>,
  Assert<Both<'SecurityAnalysisEvent'>>,
  Assert<Both<'PauseEvent'>>,
  Assert<Both<'InterruptEvent'>>,
  Assert<Both<'HookExecutionEvent'>>,
  Assert<Both<'ACPToolCallEvent'>>,
];
export type _ActionChecks = [
  Assert<BothWays<Extract<Action, { kind: 'MCPToolAction' }>, OH.McpToolAction>>,
  Assert<BothWays<Extract<Action, { kind: 'FinishAction' }>, OH.FinishAction>>,
  Assert<BothWays<Extract<Action, { kind: 'InvokeSkillAction' }>, OH.InvokeSkillAction>>,
  Assert<BothWays<Extract<Action, { kind: 'SwitchLLMAction' }>, OH.SwitchLlmAction>>,
  Assert<BothWays<Extract<Action, { kind: 'ClassifyAndSwitchLLMAction' }>, RouteAction>>,
  Assert<BothWays<Extract<Action, { kind: 'ThinkAction' }>, OH.ThinkAction>>,
  Assert<BothWays<Extract<Action, { kind: 'VisionInspectAction' }>, OH.VisionInspectAction>>,
  Assert<BothWays<Extract<Action, { kind: 'AskOracleAction' }>, OH.AskOracleAction>>,
  Assert<BothWays<Extract<Action, { kind: 'BrowserAction' }>, OH.BrowserAction>>,
  Assert<BothWays<Extract<Action, { kind: 'BrowserClickAction' }>, OH.BrowserClickAction>>,
  Assert<BothWays<Extract<Action, { kind: 'BrowserCloseTabAction' }>, OH.BrowserCloseTabAction>>,
  Assert<BothWays<Extract<Action, { kind: 'BrowserGetContentAction' }>, OH.BrowserGetContentAction>>,
  Assert<BothWays<Extract<Action, { kind: 'BrowserGetStateAction' }>, OH.BrowserGetStateAction>>,
  Assert<BothWays<Extract<Action, { kind: 'BrowserGetStorageAction' }>, OH.BrowserGetStorageAction>>,
  Assert<BothWays<Extract<Action, { kind: 'BrowserGoBackAction' }>, OH.BrowserGoBackAction>>,
  Assert<BothWays<Extract<Action, { kind: 'BrowserListTabsAction' }>, OH.BrowserListTabsAction>>,
  Assert<BothWays<Extract<Action, { kind: 'BrowserNavigateAction' }>, OH.BrowserNavigateAction>>,
  Assert<BothWays<Extract<Action, { kind: 'BrowserScrollAction' }>, OH.BrowserScrollAction>>,
  Assert<BothWays<Extract<Action, { kind: 'BrowserSetStorageAction' }>, OH.BrowserSetStorageAction>>,
  Assert<BothWays<Extract<Action, { kind: 'BrowserStartRecordingAction' }>, OH.BrowserStartRecordingAction>>,
  Assert<BothWays<Extract<Action, { kind: 'BrowserStopRecordingAction' }>, OH.BrowserStopRecordingAction>>,
  Assert<BothWays<Extract<Action, { kind: 'BrowserSwitchTabAction' }>, OH.BrowserSwitchTabAction>>,
  Assert<BothWays<Extract<Action, { kind: 'BrowserTypeAction' }>, OH.BrowserTypeAction>>,
  Assert<BothWays<Extract<Action, { kind: 'DelegateAction' }>, OH.DelegateAction>>,
  Assert<BothWays<Extract<Action, { kind: 'FileEditorAction' }>, OH.FileEditorAction>>,
  Assert<BothWays<Extract<Action, { kind: 'EditAction' }>, OH.EditAction>>,
  Assert<BothWays<Extract<Action, { kind: 'ListDirectoryAction' }>, OH.ListDirectoryAction>>,
  Assert<BothWays<Extract<Action, { kind: 'ReadFileAction' }>, OH.ReadFileAction>>,
  Assert<BothWays<Extract<Action, { kind: 'WriteFileAction' }>, OH.WriteFileAction>>,
  Assert<BothWays<Extract<Action, { kind: 'GlobAction' }>, OH.GlobAction>>,
  Assert<BothWays<Extract<Action, { kind: 'GrepAction' }>, OH.GrepAction>>,
  Assert<BothWays<Extract<Action, { kind: 'PlanningFileEditorAction' }>, OH.PlanningFileEditorAction>>,
  Assert<BothWays<Extract<Action, { kind: 'TaskAction' }>, OH.TaskAction>>,
  Assert<BothWays<Extract<Action, { kind: 'TaskTrackerAction' }>, OH.TaskTrackerAction>>,
  Assert<BothWays<Extract<Action, { kind: 'TerminalAction' }>, OH.TerminalAction>>,
  Assert<BothWays<Extract<Action, { kind: 'WorkflowAction' }>, OH.WorkflowAction>>,
];
export type _ObservationChecks = [
  Assert<BothWays<Extract<Observation, { kind: 'MCPToolObservation' }>, OH.McpToolObservation>>,
  Assert<BothWays<Extract<Observation, { kind: 'FinishObservation' }>, OH.FinishObservation>>,
  Assert<BothWays<Extract<Observation, { kind: 'InvokeSkillObservation' }>, OH.InvokeSkillObservation>>,
  Assert<BothWays<Extract<Observation, { kind: 'SwitchLLMObservation' }>, OH.SwitchLlmObservation>>,
  Assert<BothWays<Extract<Observation, { kind: 'ClassifyAndSwitchLLMObservation' }>, RouteObservation>>,
  Assert<BothWays<Extract<Observation, { kind: 'ThinkObservation' }>, OH.ThinkObservation>>,
  Assert<BothWays<Extract<Observation, { kind: 'VisionInspectObservation' }>, OH.VisionInspectObservation>>,
  Assert<BothWays<Extract<Observation, { kind: 'ClientToolObservation' }>, OH.ClientToolObservation>>,
  Assert<BothWays<Extract<Observation, { kind: 'AskOracleObservation' }>, OH.AskOracleObservation>>,
  Assert<BothWays<Extract<Observation, { kind: 'BrowserObservation' }>, OH.BrowserObservation>>,
  Assert<BothWays<Extract<Observation, { kind: 'DelegateObservation' }>, OH.DelegateObservation>>,
  Assert<BothWays<Extract<Observation, { kind: 'FileEditorObservation' }>, OH.FileEditorObservation>>,
  Assert<BothWays<Extract<Observation, { kind: 'EditObservation' }>, OH.EditObservation>>,
  Assert<BothWays<Extract<Observation, { kind: 'ListDirectoryObservation' }>, OH.ListDirectoryObservation>>,
  Assert<BothWays<Extract<Observation, { kind: 'ReadFileObservation' }>, OH.ReadFileObservation>>,
  Assert<BothWays<Extract<Observation, { kind: 'WriteFileObservation' }>, OH.WriteFileObservation>>,
  Assert<BothWays<Extract<Observation, { kind: 'GlobObservation' }>, OH.GlobObservation>>,
  Assert<BothWays<Extract<Observation, { kind: 'GrepObservation' }>, OH.GrepObservation>>,
  Assert<BothWays<Extract<Observation, { kind: 'PlanningFileEditorObservation' }>, OH.PlanningFileEditorObservation>>,
  Assert<BothWays<Extract<Observation, { kind: 'TaskObservation' }>, OH.TaskObservation>>,
  Assert<BothWays<Extract<Observation, { kind: 'TaskTrackerObservation' }>, OH.TaskTrackerObservation>>,
  Assert<BothWays<Extract<Observation, { kind: 'TerminalObservation' }>, OH.TerminalObservation>>,
  Assert<BothWays<Extract<Observation, { kind: 'WorkflowObservation' }>, OH.WorkflowObservation>>,
];
export type _ToolChecks = [
  Assert<BothWays<Extract<ToolDefinition, { kind: 'MCPToolDefinition' }>, OH.McpToolDefinition>>,
  Assert<BothWays<Extract<ToolDefinition, { kind: 'FinishTool' }>, OH.FinishTool>>,
  Assert<BothWays<Extract<ToolDefinition, { kind: 'InvokeSkillTool' }>, OH.InvokeSkillTool>>,
  Assert<BothWays<Extract<ToolDefinition, { kind: 'SwitchLLMTool' }>, OH.SwitchLlmTool>>,
  Assert<BothWays<Extract<ToolDefinition, { kind: 'ClassifyAndSwitchLLMTool' }>, RouteTool>>,
  Assert<BothWays<Extract<ToolDefinition, { kind: 'ThinkTool' }>, OH.ThinkTool>>,
  Assert<BothWays<Extract<ToolDefinition, { kind: 'VisionInspectTool' }>, OH.VisionInspectTool>>,
  Assert<BothWays<Extract<ToolDefinition, { kind: 'ClientTool' }>, OH.ClientTool>>,
  Assert<BothWays<Extract<ToolDefinition, { kind: 'AskOracleTool' }>, OH.AskOracleTool>>,
  Assert<BothWays<Extract<ToolDefinition, { kind: 'BrowserClickTool' }>, OH.BrowserClickTool>>,
  Assert<BothWays<Extract<ToolDefinition, { kind: 'BrowserCloseTabTool' }>, OH.BrowserCloseTabTool>>,
  Assert<BothWays<Extract<ToolDefinition, { kind: 'BrowserGetContentTool' }>, OH.BrowserGetContentTool>>,
  Assert<BothWays<Extract<ToolDefinition, { kind: 'BrowserGetStateTool' }>, OH.BrowserGetStateTool>>,
  Assert<BothWays<Extract<ToolDefinition, { kind: 'BrowserGetStorageTool' }>, OH.BrowserGetStorageTool>>,
  Assert<BothWays<Extract<ToolDefinition, { kind: 'BrowserGoBackTool' }>, OH.BrowserGoBackTool>>,
  Assert<BothWays<Extract<ToolDefinition, { kind: 'BrowserListTabsTool' }>, OH.BrowserListTabsTool>>,
  Assert<BothWays<Extract<ToolDefinition, { kind: 'BrowserNavigateTool' }>, OH.BrowserNavigateTool>>,
  Assert<BothWays<Extract<ToolDefinition, { kind: 'BrowserScrollTool' }>, OH.BrowserScrollTool>>,
  Assert<BothWays<Extract<ToolDefinition, { kind: 'BrowserSetStorageTool' }>, OH.BrowserSetStorageTool>>,
  Assert<BothWays<Extract<ToolDefinition, { kind: 'BrowserStartRecordingTool' }>, OH.BrowserStartRecordingTool>>,
  Assert<BothWays<Extract<ToolDefinition, { kind: 'BrowserStopRecordingTool' }>, OH.BrowserStopRecordingTool>>,
  Assert<BothWays<Extract<ToolDefinition, { kind: 'BrowserSwitchTabTool' }>, OH.BrowserSwitchTabTool>>,
  Assert<BothWays<Extract<ToolDefinition, { kind: 'BrowserToolSet' }>, OH.BrowserToolSet>>,
  Assert<BothWays<Extract<ToolDefinition, { kind: 'BrowserTypeTool' }>, OH.BrowserTypeTool>>,
  Assert<BothWays<Extract<ToolDefinition, { kind: 'FileEditorTool' }>, OH.FileEditorTool>>,
  Assert<BothWays<Extract<ToolDefinition, { kind: 'EditTool' }>, OH.EditTool>>,
  Assert<BothWays<Extract<ToolDefinition, { kind: 'ListDirectoryTool' }>, OH.ListDirectoryTool>>,
  Assert<BothWays<Extract<ToolDefinition, { kind: 'ReadFileTool' }>, OH.ReadFileTool>>,
  Assert<BothWays<Extract<ToolDefinition, { kind: 'WriteFileTool' }>, OH.WriteFileTool>>,
  Assert<BothWays<Extract<ToolDefinition, { kind: 'GlobTool' }>, OH.GlobTool>>,
  Assert<BothWays<Extract<ToolDefinition, { kind: 'GrepTool' }>, OH.GrepTool>>,
  Assert<BothWays<Extract<ToolDefinition, { kind: 'PlanningFileEditorTool' }>, OH.PlanningFileEditorTool>>,
  Assert<BothWays<Extract<ToolDefinition, { kind: 'TaskTool' }>, OH.TaskTool>>,
  Assert<BothWays<Extract<ToolDefinition, { kind: 'TaskToolSet' }>, OH.TaskToolSet>>,
  Assert<BothWays<Extract<ToolDefinition, { kind: 'TaskTrackerTool' }>, OH.TaskTrackerTool>>,
  Assert<BothWays<Extract<ToolDefinition, { kind: 'TerminalTool' }>, OH.TerminalTool>>,
  Assert<BothWays<Extract<ToolDefinition, { kind: 'WorkflowTool' }>, OH.WorkflowTool>>,
  Assert<BothWays<Extract<ToolDefinition, { kind: 'WorkflowToolSet' }>, OH.WorkflowToolSet>>,
];

// ---- Runtime: examples written against the client's types validate with our schemas. ----
const T = '2026-08-22T10:15:30.123456'; // OpenHands emits naive local ISO timestamps
const call: OH.MessageToolCall = { id: 'toolu_1', name: 'terminal', arguments: '{"command":"ls"}', origin: 'completion' };
const text: OH.TextContent = { type: 'text', text: 'hello', cache_prompt: false };

const CLIENT_ACTIONS: ClientAction[] = [
  { kind: 'MCPToolAction', data: { url: 'http://127.0.0.1' } },
  { kind: 'FinishAction', message: 'done' },
  { kind: 'InvokeSkillAction', name: 'github' },
  { kind: 'SwitchLLMAction', profile_name: 'fast', reason: 'cheaper' },
  { kind: 'ClassifyAndSwitchLLMAction' },
  { kind: 'ThinkAction', thought: 'hmm' },
  { kind: 'VisionInspectAction', image_index: 0, question: 'what is it?', profile_name: null },
  { kind: 'AskOracleAction', question: 'why?', context: null },
  { kind: 'BrowserAction' },
  { kind: 'BrowserClickAction', index: 3, new_tab: true },
  { kind: 'BrowserCloseTabAction', tab_id: 'ab12' },
  { kind: 'BrowserGetContentAction', extract_links: true, start_from_char: 10 },
  { kind: 'BrowserGetStateAction', include_screenshot: false },
  { kind: 'BrowserGetStorageAction' },
  { kind: 'BrowserGoBackAction' },
  { kind: 'BrowserListTabsAction' },
  { kind: 'BrowserNavigateAction', url: 'http://127.0.0.1:8080', new_tab: false },
  { kind: 'BrowserScrollAction', direction: 'up' },
  { kind: 'BrowserSetStorageAction', storage_state: { cookies: [], origins: [] } },
  { kind: 'BrowserStartRecordingAction' },
  { kind: 'BrowserStopRecordingAction' },
  { kind: 'BrowserSwitchTabAction', tab_id: 'cd34' },
  { kind: 'BrowserTypeAction', index: 0, text: 'abc' },
  { kind: 'DelegateAction', command: 'spawn', ids: ['a'], agent_types: null, tasks: null },
  { kind: 'FileEditorAction', command: 'insert', path: '/w/a.py', new_str: 'x', insert_line: 0, view_range: null },
  { kind: 'EditAction', file_path: '/w/a.py', old_string: 'a', new_string: 'b', expected_replacements: 1 },
  { kind: 'ListDirectoryAction', dir_path: '.', recursive: false },
  { kind: 'ReadFileAction', file_path: '/w/a.py', offset: 0, limit: 100 },
  { kind: 'WriteFileAction', file_path: '/w/b.py', content: 'print(1)' },
  { kind: 'GlobAction', pattern: '**/*.ts', path: null },
  { kind: 'GrepAction', pattern: 'TODO', path: '/w', include: '*.ts' },
  { kind: 'PlanningFileEditorAction', command: 'view', path: '/w/PLAN.md', view_range: [1, 10] },
  { kind: 'TaskAction', prompt: 'do it', description: null, subagent_type: 'default', resume: null },
  { kind: 'TaskTrackerAction', command: 'plan', task_list: [{ title: 't', notes: '', status: 'in_progress' }] },
  { kind: 'TerminalAction', command: 'ls -la', is_input: false, timeout: 30, reset: false },
  { kind: 'WorkflowAction', name: 'w', script: 'run()', max_concurrency: 2 },
];

const content: OH.TextContent[] = [text];
const CLIENT_OBSERVATIONS: ClientObservation[] = [
  { kind: 'MCPToolObservation', content, is_error: false, tool_name: 'fetch' },
  { kind: 'FinishObservation', content },
  { kind: 'InvokeSkillObservation', content, skill_name: 'github' },
  { kind: 'SwitchLLMObservation', content, profile_name: 'fast', active_model: 'm', reason: null },
  { kind: 'ClassifyAndSwitchLLMObservation', content, chosen_class: 'UI work', model: 'fast', active_model: 'm' },
  { kind: 'ThinkObservation', content },
  { kind: 'VisionInspectObservation', content, image_index: 0, question: 'q', answer: 'a', model: null },
  { kind: 'ClientToolObservation', content },
  { kind: 'AskOracleObservation', content },
  { kind: 'BrowserObservation', content, screenshot_data: null, full_output_save_dir: null },
  { kind: 'DelegateObservation', content, command: 'delegate' },
  { kind: 'FileEditorObservation', content, command: 'str_replace', path: '/w/a.py', prev_exist: true, old_content: 'a', new_content: 'b' },
  { kind: 'EditObservation', content, file_path: '/w/a.py', is_new_file: false, replacements_made: 1 },
  {
    kind: 'ListDirectoryObservation',
    content,
    dir_path: '/w',
    entries: [{ name: 'a.py', path: '/w/a.py', is_directory: false, size: 3, modified_time: T }],
    total_count: 1,
    is_truncated: false,
  },
  { kind: 'ReadFileObservation', content, file_path: '/w/a.py', file_content: 'a', lines_shown: [1, 1], total_lines: 1 },
  { kind: 'WriteFileObservation', content, file_path: '/w/b.py', is_new_file: true, old_content: null, new_content: 'x' },
  { kind: 'GlobObservation', content, files: ['/w/a.ts'], pattern: '**/*.ts', search_path: '/w', truncated: false },
  { kind: 'GrepObservation', content, matches: ['/w/a.ts'], pattern: 'TODO', search_path: '/w', include_pattern: null },
  { kind: 'PlanningFileEditorObservation', content, command: 'view', path: '/w/PLAN.md' },
  { kind: 'TaskObservation', content, task_id: 't1', subagent: 'default', status: 'completed' },
  { kind: 'TaskTrackerObservation', content, command: 'view', task_list: [{ title: 't' }] },
  {
    kind: 'TerminalObservation',
    content,
    is_error: false,
    command: 'ls -la',
    exit_code: 0,
    timeout: false,
    metadata: { exit_code: 0, pid: -1, username: 'openhands', hostname: 'h', working_dir: '/w', prefix: '', suffix: '' },
  },
  { kind: 'WorkflowObservation', content, name: 'w', status: 'completed' },
];

const toolBase = { description: 'd', action_type: 'TerminalAction', observation_type: null, annotations: null, meta: null, title: 't' };
const CLIENT_TOOLS: ClientTool[] = [
  { ...toolBase, kind: 'TerminalTool', annotations: { readOnlyHint: false, destructiveHint: true, title: 'terminal' } },
  { ...toolBase, kind: 'BrowserToolSet' },
  { ...toolBase, kind: 'ClassifyAndSwitchLLMTool', action_type: 'ClassifyAndSwitchLLMAction' },
  { ...toolBase, kind: 'TaskTrackerTool', meta: { version: 1 } },
  {
    ...toolBase,
    kind: 'MCPToolDefinition',
    mcp_tool: {
      name: 'fetch',
      inputSchema: { type: 'object' },
      annotations: { readOnlyHint: true },
      icons: [{ src: 'http://127.0.0.1/i.png' }],
    },
  },
  { ...toolBase, kind: 'ClientTool', client_tool_name: 'pick_file', input_schema: { type: 'object' } },
];

const CLIENT_EVENTS: { [K in EventKind]: ClientEventByKind[K] & { id: string; timestamp: string } } = {
  Condensation: { id: 'c1', timestamp: T, kind: 'Condensation', llm_response_id: 'r', forgotten_event_ids: ['a'], summary: null, summary_offset: 0 },
  CondensationRequest: { id: 'c2', timestamp: T, kind: 'CondensationRequest' },
  CondensationSummaryEvent: { id: 'c3', timestamp: T, kind: 'CondensationSummaryEvent', summary: 's' },
  ConversationErrorEvent: {
    id: 'c4',
    timestamp: T,
    kind: 'ConversationErrorEvent',
    source: 'environment',
    code: 'RuntimeError',
    detail: 'boom',
    classification: { kind: 'internal', retryable: false, user_action: 'none', error_id: 'x' },
  },
  ConversationStateUpdateEvent: { id: 'c5', timestamp: T, kind: 'ConversationStateUpdateEvent', key: 'full_state', value: { execution_status: 'idle' } },
  LLMCompletionLogEvent: { id: 'c6', timestamp: T, kind: 'LLMCompletionLogEvent', filename: 'f.json', log_data: '{}' },
  ActionEvent: {
    id: 'c7',
    timestamp: T,
    kind: 'ActionEvent',
    source: 'agent',
    thought: [text],
    action: CLIENT_ACTIONS[33] ?? null,
    tool_name: 'terminal',
    tool_call_id: 'toolu_1',
    tool_call: call,
    llm_response_id: 'r',
    security_risk: 'HIGH',
    parent_id: null,
  },
  MessageEvent: {
    id: 'c8',
    timestamp: T,
    kind: 'MessageEvent',
    source: 'agent',
    llm_message: { role: 'assistant', content: [text], tool_calls: [call], reasoning_content: 'r', thinking_blocks: [{ type: 'redacted_thinking', data: 'x' }] },
    llm_response_id: 'r',
    critic_result: { score: 1, message: null },
  },
  AgentErrorEvent: { id: 'c9', timestamp: T, kind: 'AgentErrorEvent', tool_name: 't', tool_call_id: 'x', error: 'bad args' },
  ObservationEvent: {
    id: 'c10',
    timestamp: T,
    kind: 'ObservationEvent',
    tool_name: 'terminal',
    tool_call_id: 'toolu_1',
    action_id: 'c7',
    observation: CLIENT_OBSERVATIONS[20] as ClientObservation,
  },
  UserRejectObservation: { id: 'c11', timestamp: T, kind: 'UserRejectObservation', tool_name: 't', tool_call_id: 'x', action_id: 'c7', rejection_source: 'hook' },
  SystemPromptEvent: { id: 'c12', timestamp: T, kind: 'SystemPromptEvent', system_prompt: text, tools: CLIENT_TOOLS, dynamic_context: null },
  TokenEvent: { id: 'c13', timestamp: T, kind: 'TokenEvent', source: 'agent', prompt_token_ids: [1], response_token_ids: [2] },
  SecurityAnalysisEvent: { id: 'c-sec', timestamp: T, kind: 'SecurityAnalysisEvent', source: 'environment', analyzer: 'PatternSecurityAnalyzer', policy: 'ConfirmRisky', risks: { a: 'HIGH' } },
  PauseEvent: { id: 'c14', timestamp: T, kind: 'PauseEvent' },
  InterruptEvent: { id: 'c15', timestamp: T, kind: 'InterruptEvent', source: 'user' },
  HookExecutionEvent: {
    id: 'c16',
    timestamp: T,
    kind: 'HookExecutionEvent',
    hook_event_type: 'PreToolUse',
    hook_command: 'x',
    success: false,
    blocked: true,
    exit_code: 2,
    reason: 'denied',
    hook_input: { tool: 'terminal' },
  },
  ACPToolCallEvent: { id: 'c17', timestamp: T, kind: 'ACPToolCallEvent', tool_call_id: 'call_1', title: 'bash', status: 'in_progress', tool_kind: 'execute', raw_input: { command: 'ls' } },
};

describe('wire compatibility with @openhands/typescript-client', () => {
  it.each(Object.keys(CLIENT_EVENTS) as EventKind[])('accepts a client-shaped %s', (kind) => {
    expect(parseEvent(CLIENT_EVENTS[kind]).kind).toBe(kind);
  });

  it.each(CLIENT_ACTIONS.map((a) => [a.kind, a] as const))('accepts a client-shaped %s', (_kind, action) => {
    const ev = parseEvent({ ...CLIENT_EVENTS.ActionEvent, action });
    expect(ev.kind === 'ActionEvent' && ev.action?.kind).toBe(action.kind);
  });

  it.each(CLIENT_OBSERVATIONS.map((o) => [o.kind, o] as const))('accepts a client-shaped %s', (_kind, observation) => {
    const ev = parseEvent({ ...CLIENT_EVENTS.ObservationEvent, observation });
    expect(ev.kind === 'ObservationEvent' && ev.observation.kind).toBe(observation.kind);
  });

  it('accepts client-shaped tool definitions of every shape', () => {
    const ev = parseEvent(CLIENT_EVENTS.SystemPromptEvent);
    expect(ev.kind === 'SystemPromptEvent' && ev.tools.map((t) => t.kind)).toEqual(CLIENT_TOOLS.map((t) => t.kind));
  });

  it('our examples are client-typed too (checked by tsc above)', () => {
    const asClient: { [K in EventKind]: ClientEventByKind[K] } = EXAMPLE_EVENTS;
    expect(Object.keys(asClient)).toHaveLength(Object.keys(CLIENT_EVENTS).length);
  });
});
