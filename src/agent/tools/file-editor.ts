// `file_editor`: view, create, str_replace, insert and undo_edit on absolute paths, with the
// OpenHands observation shape (whole file before and after each edit).
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { capOutput } from './terminal.ts';
import { optional, requireString, textContent, ToolArgumentError, type AgentTool, type ToolResult } from './tool.ts';

const COMMANDS = ['view', 'create', 'str_replace', 'insert', 'undo_edit'] as const;
type Command = (typeof COMMANDS)[number];

class EditorError extends Error {}

function numbered(text: string, start = 1): string {
  return text
    .split('\n')
    .map((line, i) => `${String(i + start).padStart(6)}\t${line}`)
    .join('\n');
}

export function fileEditorTool(): AgentTool {
  /** Previous contents per path, for undo_edit; lives as long as the conversation's agent. */
  const history = new Map<string, string[]>();

  const read = (path: string) => {
    if (!existsSync(path)) throw new EditorError(`The path ${path} does not exist. Please provide a valid path.`);
    return readFileSync(path, 'utf8');
  };
  const write = (path: string, content: string, previous: string | undefined) => {
    if (previous !== undefined) history.set(path, [...(history.get(path) ?? []), previous]);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
  };

  function run(a: Record<string, unknown>): { text: string; prevExist: boolean; oldContent: string | null; newContent: string | null } {
    const path = String(a.path);
    const command = a.command as Command;
    switch (command) {
      case 'view': {
        if (existsSync(path) && statSync(path).isDirectory()) {
          const entries = readdirSync(path, { withFileTypes: true })
            .filter((e) => !e.name.startsWith('.'))
            .map((e) => (e.isDirectory() ? `${join(path, e.name)}/` : join(path, e.name)));
          return { text: `Here's the files and directories in ${path}:\n${entries.join('\n')}`, prevExist: true, oldContent: null, newContent: null };
        }
        const content = read(path);
        const range = a.view_range as number[] | null | undefined;
        if (range) {
          const lines = content.split('\n');
          const [from, to] = [range[0] ?? 1, range[1] === -1 || range[1] === undefined ? lines.length : range[1]];
          if (from < 1 || from > lines.length || to < from) throw new EditorError(`Invalid view_range ${JSON.stringify(range)}: the file has ${lines.length} lines`);
          return { text: `Here's the result of running \`cat -n\` on ${path}:\n${numbered(lines.slice(from - 1, to).join('\n'), from)}`, prevExist: true, oldContent: null, newContent: null };
        }
        return { text: `Here's the result of running \`cat -n\` on ${path}:\n${numbered(content)}`, prevExist: true, oldContent: null, newContent: null };
      }
      case 'create': {
        if (typeof a.file_text !== 'string') throw new EditorError('Parameter `file_text` is required for command: create');
        if (existsSync(path)) throw new EditorError(`File already exists at: ${path}. Cannot overwrite files using command \`create\`.`);
        write(path, a.file_text, undefined);
        return { text: `File created successfully at: ${path}`, prevExist: false, oldContent: null, newContent: a.file_text };
      }
      case 'str_replace': {
        if (typeof a.old_str !== 'string') throw new EditorError('Parameter `old_str` is required for command: str_replace');
        const content = read(path);
        const count = content.split(a.old_str).length - 1;
        if (count === 0) throw new EditorError(`No replacement was performed, old_str \`${a.old_str}\` did not appear verbatim in ${path}.`);
        if (count > 1) throw new EditorError(`No replacement was performed. Multiple occurrences of old_str \`${a.old_str}\`; make it unique.`);
        const updated = content.replace(a.old_str, () => String(a.new_str ?? ''));
        write(path, updated, content);
        return { text: `The file ${path} has been edited. Here's the result of running \`cat -n\` on the file:\n${numbered(updated)}`, prevExist: true, oldContent: content, newContent: updated };
      }
      case 'insert': {
        if (typeof a.new_str !== 'string') throw new EditorError('Parameter `new_str` is required for command: insert');
        if (typeof a.insert_line !== 'number') throw new EditorError('Parameter `insert_line` is required for command: insert');
        const content = read(path);
        const lines = content.split('\n');
        if (a.insert_line < 0 || a.insert_line > lines.length) throw new EditorError(`Invalid insert_line ${a.insert_line}: it must be within [0, ${lines.length}]`);
        lines.splice(a.insert_line, 0, ...a.new_str.split('\n'));
        const updated = lines.join('\n');
        write(path, updated, content);
        return { text: `The file ${path} has been edited. Here's the result of running \`cat -n\` on the file:\n${numbered(updated)}`, prevExist: true, oldContent: content, newContent: updated };
      }
      case 'undo_edit': {
        const previous = history.get(path)?.pop();
        if (previous === undefined) throw new EditorError(`No edit history found for ${path}.`);
        const current = read(path);
        writeFileSync(path, previous);
        return { text: `Last edit to ${path} undone successfully.`, prevExist: true, oldContent: current, newContent: previous };
      }
    }
  }

  return {
    name: 'file_editor',
    definitionKind: 'FileEditorTool',
    actionKind: 'FileEditorAction',
    observationKind: 'FileEditorObservation',
    description:
      'View, create and edit files. `view` shows a file with line numbers (or lists a directory), `create` writes a new file, ' +
      '`str_replace` replaces one unique occurrence of old_str with new_str, `insert` puts new_str after line insert_line, `undo_edit` reverts the last edit. Paths must be absolute.',
    parameters: {
      type: 'object',
      properties: {
        command: { type: 'string', enum: [...COMMANDS] },
        path: { type: 'string', description: 'Absolute path to a file or directory.' },
        file_text: { type: 'string' },
        old_str: { type: 'string' },
        new_str: { type: 'string' },
        insert_line: { type: 'integer', minimum: 0 },
        view_range: { type: 'array', items: { type: 'integer' } },
        summary: { type: 'string', description: 'About 10 words describing the action.' },
      },
      required: ['command', 'path'],
    },
    toAction(args) {
      const command = requireString(args, 'command');
      if (!(COMMANDS as readonly string[]).includes(command)) throw new ToolArgumentError(`Unknown command '${command}'; use one of ${COMMANDS.join(', ')}`);
      const path = requireString(args, 'path');
      if (!isAbsolute(path)) throw new ToolArgumentError(`The path '${path}' is not an absolute path; it must start with '/'.`);
      const insertLine = args.insert_line;
      if (insertLine !== undefined && insertLine !== null && (!Number.isInteger(insertLine) || (insertLine as number) < 0)) {
        throw new ToolArgumentError('insert_line must be an integer >= 0');
      }
      return {
        kind: 'FileEditorAction',
        command,
        path,
        file_text: optional<string>(args, 'file_text', 'string') ?? null,
        old_str: optional<string>(args, 'old_str', 'string') ?? null,
        new_str: optional<string>(args, 'new_str', 'string') ?? null,
        insert_line: (insertLine as number | undefined) ?? null,
        view_range: Array.isArray(args.view_range) ? (args.view_range as number[]) : null,
      };
    },
    async execute(action, ctx): Promise<ToolResult> {
      const base = { kind: 'FileEditorObservation', command: action.command, path: action.path };
      try {
        const r = run(action);
        const text = ctx.mask(capOutput(r.text));
        return {
          observation: { ...base, content: textContent(text), is_error: false, prev_exist: r.prevExist, old_content: r.oldContent === null ? null : ctx.mask(r.oldContent), new_content: r.newContent === null ? null : ctx.mask(r.newContent) },
          text,
          isError: false,
        };
      } catch (err) {
        if (!(err instanceof EditorError)) throw err;
        const text = `ERROR:\n${err.message}`;
        return { observation: { ...base, content: textContent(text), is_error: true }, text, isError: true };
      }
    },
  };
}
