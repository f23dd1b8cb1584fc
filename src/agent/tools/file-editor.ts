// `file_editor`: view, create, str_replace, insert and undo_edit on absolute paths, with the
// OpenHands FileEditorAction/FileEditorObservation shapes (the whole file before and after each
// edit) and its messages, so models trained on OpenHands read familiar answers.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import type { EditorCommand, FileEditorAction, FileEditorObservation } from '../../api/events/index.ts';
import { capOutput, MAX_OUTPUT_CHARS } from './output.ts';
import { optional, requireString, textContent, ToolArgumentError, type AgentTool } from './tool.ts';

const COMMANDS: readonly EditorCommand[] = ['view', 'create', 'str_replace', 'insert', 'undo_edit'];
/** Lines of context around an edit in the snippet shown back. */
const SNIPPET_LINES = 4;
/** Directory listings stop here; a node_modules must not flood the model. */
const MAX_LISTED = 1_000;

/** A mistake the model can correct: an observation with is_error, not a scaffold failure. */
class EditorError extends Error {}

interface Outcome {
  text: string;
  prevExist: boolean;
  oldContent: string | null;
  newContent: string | null;
}

function numbered(text: string, start = 1): string {
  return text
    .split('\n')
    .map((line, i) => `${String(i + start).padStart(6)}\t${line}`)
    .join('\n');
}

/** Lines around an edit that starts at 0-based line `from` and spans `count` lines of the new text. */
function snippet(content: string, from: number, count: number): string {
  const lines = content.split('\n');
  const start = Math.max(0, from - SNIPPET_LINES);
  const end = Math.min(lines.length, from + count + SNIPPET_LINES);
  return numbered(lines.slice(start, end).join('\n'), start + 1);
}

function listDirectory(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string, depth: number) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries.filter((x) => !x.name.startsWith('.')).sort((a, b) => a.name.localeCompare(b.name))) {
      if (out.length >= MAX_LISTED) return;
      const path = join(dir, e.name);
      out.push(e.isDirectory() ? `${path}/` : path);
      if (e.isDirectory() && depth < 2) walk(path, depth + 1);
    }
  };
  walk(root, 1);
  return out;
}

export function fileEditorTool(): AgentTool<FileEditorAction> {
  /** Earlier contents per path for undo_edit (null: the file did not exist); lives as long as the agent. */
  const history = new Map<string, (string | null)[]>();

  const read = (path: string): string => {
    if (!existsSync(path)) throw new EditorError(`The path ${path} does not exist. Please provide a valid path.`);
    if (statSync(path).isDirectory()) throw new EditorError(`The path ${path} is a directory and only the \`view\` command can be used on directories.`);
    const bytes = readFileSync(path);
    if (bytes.subarray(0, 8192).includes(0)) throw new EditorError(`The file ${path} appears to be binary; file_editor views and edits text files only.`);
    return bytes.toString('utf8');
  };
  const write = (path: string, content: string, previous: string | null) => {
    history.set(path, [...(history.get(path) ?? []), previous]);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
  };
  const edited = (path: string, content: string, from: number, count: number) =>
    `The file ${path} has been edited. Here's the result of running \`cat -n\` on a snippet of ${path}:\n${snippet(content, from, count)}\nReview the changes and make sure they are as expected. Edit the file again if necessary.`;

  function view(a: FileEditorAction): Outcome {
    const { path } = a;
    if (existsSync(path) && statSync(path).isDirectory()) {
      if (a.view_range) throw new EditorError('The `view_range` parameter is not allowed when `path` points to a directory.');
      const entries = listDirectory(path);
      const more = entries.length >= MAX_LISTED ? `\n[Listing stopped at ${MAX_LISTED} entries]` : '';
      return { text: `Here's the files and directories up to 2 levels deep in ${path}, excluding hidden items:\n${path}/\n${entries.join('\n')}${more}`, prevExist: true, oldContent: null, newContent: null };
    }
    const content = read(path);
    const lines = content.split('\n');
    let from = 1;
    let shown = content;
    if (a.view_range) {
      const [start, end] = a.view_range;
      if (a.view_range.length !== 2 || start === undefined || end === undefined) throw new EditorError('Invalid `view_range` parameter: it should be a list of two integers, [start, end] (end -1 for the end of the file).');
      if (start < 1 || start > lines.length) throw new EditorError(`Invalid \`view_range\` parameter: ${JSON.stringify(a.view_range)}. Its first element \`${start}\` should be within the range of lines of the file: [1, ${lines.length}].`);
      if (end !== -1 && (end < start || end > lines.length)) throw new EditorError(`Invalid \`view_range\` parameter: ${JSON.stringify(a.view_range)}. Its second element \`${end}\` should be -1 or within [${start}, ${lines.length}].`);
      from = start;
      shown = lines.slice(start - 1, end === -1 ? lines.length : end).join('\n');
    }
    const body = numbered(shown, from);
    const capped =
      body.length > MAX_OUTPUT_CHARS
        ? `${capOutput(body)}\n[To save on context only part of this file has been shown to you. Search inside the file with \`grep -n\` to find the line numbers you need, then view them with view_range.]`
        : body;
    return { text: `Here's the result of running \`cat -n\` on ${path}:\n${capped}`, prevExist: true, oldContent: null, newContent: null };
  }

  function run(a: FileEditorAction): Outcome {
    const { path } = a;
    switch (a.command) {
      case 'view':
        return view(a);
      case 'create': {
        if (typeof a.file_text !== 'string') throw new EditorError('Parameter `file_text` is required for command: create.');
        if (existsSync(path)) throw new EditorError(`File already exists at: ${path}. Cannot overwrite files using command \`create\`.`);
        write(path, a.file_text, null);
        return { text: `File created successfully at: ${path}`, prevExist: false, oldContent: null, newContent: a.file_text };
      }
      case 'str_replace': {
        if (typeof a.old_str !== 'string') throw new EditorError('Parameter `old_str` is required for command: str_replace.');
        const newStr = a.new_str ?? '';
        if (a.old_str === newStr) throw new EditorError('No replacement was performed. `new_str` and `old_str` must be different.');
        const content = read(path);
        const at: number[] = [];
        for (let i = content.indexOf(a.old_str); i >= 0 && a.old_str; i = content.indexOf(a.old_str, i + 1)) at.push(i);
        if (at.length === 0) throw new EditorError(`No replacement was performed, old_str \`${a.old_str}\` did not appear verbatim in ${path}.`);
        const lineOf = (i: number) => content.slice(0, i).split('\n').length;
        if (at.length > 1) throw new EditorError(`No replacement was performed. Multiple occurrences of old_str \`${a.old_str}\` in lines ${at.map(lineOf).join(', ')}. Please ensure it is unique.`);
        const updated = content.slice(0, at[0]) + newStr + content.slice(at[0]! + a.old_str.length);
        write(path, updated, content);
        return { text: edited(path, updated, lineOf(at[0]!) - 1, newStr.split('\n').length), prevExist: true, oldContent: content, newContent: updated };
      }
      case 'insert': {
        if (typeof a.new_str !== 'string') throw new EditorError('Parameter `new_str` is required for command: insert.');
        if (typeof a.insert_line !== 'number') throw new EditorError('Parameter `insert_line` is required for command: insert.');
        const content = read(path);
        const lines = content.split('\n');
        if (a.insert_line > lines.length) throw new EditorError(`Invalid \`insert_line\` parameter: ${a.insert_line}. It should be within the range of lines of the file: [0, ${lines.length}].`);
        const inserted = a.new_str.split('\n');
        lines.splice(a.insert_line, 0, ...inserted);
        const updated = lines.join('\n');
        write(path, updated, content);
        return { text: edited(path, updated, a.insert_line, inserted.length), prevExist: true, oldContent: content, newContent: updated };
      }
      case 'undo_edit': {
        const past = history.get(path);
        if (!past?.length) throw new EditorError(`No edit history found for ${path}.`);
        const previous = past.pop()!;
        const current = existsSync(path) ? readFileSync(path, 'utf8') : null;
        if (previous === null) {
          rmSync(path, { force: true });
          return { text: `Last edit to ${path} undone successfully: the file it created is removed.`, prevExist: current !== null, oldContent: current, newContent: null };
        }
        writeFileSync(path, previous);
        return { text: `Last edit to ${path} undone successfully. Here's the result of running \`cat -n\` on ${path}:\n${capOutput(numbered(previous))}`, prevExist: current !== null, oldContent: current, newContent: previous };
      }
    }
  }

  return {
    name: 'file_editor',
    definitionKind: 'FileEditorTool',
    actionKind: 'FileEditorAction',
    observationKind: 'FileEditorObservation',
    description: [
      'Custom editing tool for viewing, creating and editing files in plain-text format.',
      '* `view` shows a file with line numbers (`cat -n`), or lists a directory up to 2 levels deep (hidden items excluded).',
      '* `create` writes a new file; it cannot overwrite an existing one.',
      '* `str_replace` replaces old_str, which must match EXACTLY one place in the file (include enough surrounding lines to make it unique), with new_str.',
      '* `insert` puts new_str AFTER line insert_line (0 inserts at the top).',
      '* `undo_edit` reverts the last edit made to the file.',
      '* Paths must be absolute, e.g. /workspace/project/file.py.',
    ].join('\n'),
    parameters: {
      type: 'object',
      properties: {
        command: { type: 'string', enum: [...COMMANDS], description: 'The command to run.' },
        path: { type: 'string', description: 'Absolute path to a file or directory.' },
        file_text: { type: 'string', description: 'Required for `create`: the content of the file.' },
        old_str: { type: 'string', description: 'Required for `str_replace`: the exact text to replace.' },
        new_str: { type: 'string', description: 'For `str_replace`, the replacement (empty to delete); for `insert`, the text to insert.' },
        insert_line: { type: 'integer', minimum: 0, description: 'Required for `insert`: new_str goes after this line.' },
        view_range: { type: 'array', items: { type: 'integer' }, description: 'For `view` of a file: [start, end] lines, 1-based; end -1 means to the end.' },
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
      const range = args.view_range;
      if (range !== undefined && range !== null && !(Array.isArray(range) && range.every((n) => Number.isInteger(n)))) {
        throw new ToolArgumentError('view_range must be a list of integers, [start, end]');
      }
      return {
        kind: 'FileEditorAction',
        command: command as EditorCommand,
        path,
        file_text: optional<string>(args, 'file_text', 'string') ?? null,
        old_str: optional<string>(args, 'old_str', 'string') ?? null,
        new_str: optional<string>(args, 'new_str', 'string') ?? null,
        insert_line: (insertLine as number | null | undefined) ?? null,
        view_range: (range as number[] | null | undefined) ?? null,
      };
    },
    async execute(action, ctx): Promise<FileEditorObservation> {
      const base = { kind: 'FileEditorObservation' as const, command: action.command, path: action.path };
      try {
        const r = run(action);
        return {
          ...base,
          content: textContent(ctx.mask(r.text)),
          is_error: false,
          prev_exist: r.prevExist,
          old_content: r.oldContent === null ? null : ctx.mask(r.oldContent),
          new_content: r.newContent === null ? null : ctx.mask(r.newContent),
        };
      } catch (err) {
        if (!(err instanceof EditorError)) throw err;
        return { ...base, content: textContent(ctx.mask(`ERROR:\n${err.message}`)), is_error: true, prev_exist: existsSync(action.path), old_content: null, new_content: null };
      }
    },
  };
}
