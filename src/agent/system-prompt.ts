// The system prompt and the per-conversation context the model starts from.
import type { AgentTool } from './tools/tool.ts';

export function systemPrompt(tools: readonly AgentTool[]): string {
  return [
    'You are a coding agent working in a sandbox on behalf of a user.',
    'Work step by step: inspect before you change, run commands to verify, and keep changes minimal and correct.',
    'Use the tools to act; when the task is complete, call `finish` with a short message for the user.',
    `Available tools: ${tools.map((t) => t.name).join(', ')}.`,
    'Never print, echo or write secret values; refer to secrets only by their environment variable names.',
  ].join('\n');
}

export function dynamicContext(workspaceDir: string, secretNames: readonly string[]): string {
  const lines = [`Your working directory is ${workspaceDir}. Use absolute paths with file_editor.`];
  if (secretNames.length) lines.push(`These secrets are available as environment variables in the terminal: ${secretNames.join(', ')}.`);
  return lines.join('\n');
}
