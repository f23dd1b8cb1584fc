// Shell command semantics for the local analyzers, over the same tree-sitter-bash grammar (0.25.1)
// OpenHands 1.58 parses with (`_shell_ast.py`, `defense_in_depth/shell_semantics.py`), so both see
// the same syntax tree; the reading of that tree is our own. It resolves command names and
// arguments through quotes, escapes and path prefixes, finds recursive force-deletes, and descends
// into source a command executes directly (`sh -c '…'`, `eval …`, `command eval …`).
//
// Standard input a runner reads as its script is followed too (here-documents, here-strings, static
// echo/printf/cat output piped into `sh`, and into a runner's own `-c` script that reads it), with
// 1.58's reading of the grammar's odd shapes: words the grammar hangs on a redirect
// (`rm 2>/dev/null -rf /etc`), a number word glued to a redirect taken as its descriptor
// (`sh 0<<<'…'`), a here-string the grammar splits (`<<` ERROR then `< '…'`), and a pipeline that
// starts inside a here-document (`cat <<'EOF' | sh`). The side-by-side table (side-by-side.test.ts)
// pins what agrees.
import { createRequire } from 'node:module';
import { posix } from 'node:path';
import type { Language, Node, Parser } from 'web-tree-sitter';

let language: Promise<{ Parser: typeof Parser; lang: Language }> | undefined;

/**
 * The grammar, loaded once per process (WASM; no native build). The module too is loaded only here:
 * most agent servers never run a local analyzer, and every module at start-up costs cold start and RSS.
 */
function bash(): Promise<{ Parser: typeof Parser; lang: Language }> {
  language ??= (async () => {
    const ts = await import('web-tree-sitter');
    await ts.Parser.init();
    const wasm = createRequire(import.meta.url).resolve('tree-sitter-bash/tree-sitter-bash.wasm');
    return { Parser: ts.Parser, lang: await ts.Language.load(wasm) };
  })();
  return language;
}

export interface ShellWord {
  text: string;
  type: string;
  node: Node;
}

export interface ShellCommand {
  name: ShellWord | null;
  words: ShellWord[];
  node: Node;
  hasError: boolean;
}

export interface ShellProgram {
  source: string;
  root: Node;
}

/** A parser per call (as 1.58): parsers keep state; the language is shared. */
export async function parseShell(source: string): Promise<ShellProgram | null> {
  const { Parser, lang } = await bash();
  const parser = new Parser();
  try {
    parser.setLanguage(lang);
    const tree = parser.parse(source);
    return tree ? { source, root: tree.rootNode } : null;
  } finally {
    parser.delete();
  }
}

function* walk(node: Node): Generator<Node> {
  if (node.isNamed) yield node;
  for (const c of node.children) if (c) yield* walk(c);
}

const named = (n: Node): Node[] => n.namedChildren.filter((c): c is Node => c !== null);

function hasMissing(n: Node): boolean {
  return n.isMissing || n.children.some((c) => c !== null && hasMissing(c));
}
const parseUncertain = (n: Node): boolean => n.hasError || hasMissing(n);

const SKIP = new Set(['command_name', 'comment', 'file_redirect', 'heredoc_redirect', 'herestring_redirect', 'redirected_statement', 'variable_assignment']);

const word = (n: Node): ShellWord => ({ text: n.text, type: n.type, node: n });
const isDecimal = (text: string): boolean => /^[0-9]+$/.test(text);

/** A redirect and the redirects nested in it (the grammar hangs a later redirect on an earlier one). */
function* redirectTree(r: Node): Generator<Node> {
  yield r;
  for (let i = 0; i < r.childCount; i++) {
    const c = r.child(i);
    if (c?.isNamed && r.fieldNameForChild(i) === 'redirect') yield* redirectTree(c);
  }
}

/** The redirects of the redirected statements around a command (not its own). */
function enclosingRedirects(node: Node): Node[] {
  const out: Node[] = [];
  let container = node;
  while (container.parent?.type === 'redirected_statement') {
    container = container.parent;
    for (const c of named(container)) if (c.type.includes('redirect')) out.push(c);
  }
  return out;
}

/**
 * Words the grammar parses as part of a redirect but the shell gives the command: a redirect's
 * `argument`s, and its destinations after the first (`rm 2>/dev/null -rf /etc` runs `rm -rf /etc`),
 * except a number glued to the next redirect (its descriptor).
 */
function* redirectArguments(r: Node, redirectStarts: Set<number>): Generator<Node> {
  let destinationSeen = false;
  for (let i = 0; i < r.childCount; i++) {
    const c = r.child(i);
    if (!c?.isNamed) continue;
    const field = r.fieldNameForChild(i);
    if (field === 'argument') yield c;
    else if (field === 'destination') {
      if (destinationSeen && !(isDecimal(c.text) && redirectStarts.has(c.endIndex))) yield c;
      destinationSeen = true;
    } else if (field === 'redirect') yield* redirectArguments(c, redirectStarts);
  }
}

function viewCommand(node: Node): ShellCommand {
  let name: ShellWord | null = null;
  const words: ShellWord[] = [];
  for (const c of named(node)) {
    if (c.type === 'command_name') {
      name = word(c);
      continue;
    }
    if (!name || SKIP.has(c.type) || c.type.includes('redirect')) continue;
    words.push(word(c));
  }
  const redirects = enclosingRedirects(node);
  const starts = new Set(redirects.flatMap((r) => [...redirectTree(r)].map((n) => n.startIndex)));
  for (const r of redirects) for (const a of redirectArguments(r, starts)) words.push(word(a));
  words.sort((a, b) => a.node.startIndex - b.node.startIndex);
  return { name, words, node, hasError: parseUncertain(node) };
}

export function* commands(program: ShellProgram): Generator<ShellCommand> {
  for (const n of walk(program.root)) if (n.type === 'command') yield viewCommand(n);
}

export function* pipelines(program: ShellProgram): Generator<{ node: Node; hasError: boolean; complete: boolean }> {
  for (const n of walk(program.root)) {
    if (n.type !== 'pipeline') continue;
    let complete = true;
    for (const c of named(n)) {
      let cur: Node | null = c;
      while (cur && cur.type === 'redirected_statement') {
        const cmds: Node[] = named(cur).filter((x) => x.type === 'command');
        cur = cmds.length === 1 ? cmds[0]! : null;
      }
      if (!cur || cur.type !== 'command') complete = false;
    }
    yield { node: n, hasError: parseUncertain(n), complete: complete && named(n).length > 0 };
  }
}

// ---- literals -----------------------------------------------------------------------------------

const UNRESOLVED = new Set(['command_substitution', 'process_substitution', 'expansion', 'simple_expansion', 'arithmetic_expansion', 'ansi_c_string']);
const DQ_ESCAPABLE = new Set(['$', '`', '"', '\\']);

function unescape(text: string, escapable: Set<string> | null): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '\\' && i + 1 < text.length) {
      const f = text[i + 1]!;
      if (f === '\n') {
        i++;
        continue;
      }
      if (!escapable || escapable.has(f)) {
        out += f;
        i++;
        continue;
      }
    }
    out += ch;
  }
  return out;
}

function literalParts(node: Node): string[] | null {
  if (UNRESOLVED.has(node.type)) return null;
  switch (node.type) {
    case 'word':
    case 'number':
      return [unescape(node.text, null)];
    case 'raw_string': {
      const t = node.text;
      return [t.length >= 2 ? t.slice(1, -1) : ''];
    }
    case 'string_content':
      return [unescape(node.text, DQ_ESCAPABLE)];
    case 'string':
    case 'command_name':
    case 'concatenation': {
      const parts: string[] = [];
      for (const c of named(node)) {
        const p = literalParts(c);
        if (!p) return null;
        parts.push(...p);
      }
      return parts;
    }
    default:
      return null;
  }
}

/** The word after quote removal, or null when it is dynamic (expansions, substitutions, $'…'). */
export const literal = (node: Node): string | null => literalParts(node)?.join('') ?? null;

/** Whether unquoted text has pathname (`*?[…]`) or brace (`{a,b}`, `{1..3}`) expansion syntax. */
export function expansionSyntax(text: string): [pathname: boolean, brace: boolean] {
  let bracket = false;
  const braces: boolean[] = [];
  let pathname = false;
  let brace = false;
  let quote: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quote === "'") {
      if (ch === quote) quote = null;
      continue;
    }
    if (quote === '"') {
      if (ch === '\\' && i + 1 < text.length && (DQ_ESCAPABLE.has(text[i + 1]!) || text[i + 1] === '\n')) {
        i++;
        continue;
      }
      if (ch === quote) quote = null;
      continue;
    }
    if (ch === '\\') {
      i++;
      continue;
    }
    if (ch === "'" || ch === '"') quote = ch;
    else if (ch === '*' || ch === '?') pathname = true;
    else if (ch === '[') bracket = true;
    else if (ch === ']' && bracket) {
      pathname = true;
      bracket = false;
    } else if (ch === '{') braces.push(false);
    else if (ch === '}' && braces.length) {
      if (braces.pop()) brace = true;
    } else if (braces.length && (ch === ',' || text.startsWith('..', i))) braces[braces.length - 1] = true;
  }
  return [pathname, brace];
}

function multiArgExpansion(node: Node): boolean {
  if (node.type === 'expansion' || node.type === 'simple_expansion') {
    if (named(node).some((c) => c.type === 'special_variable_name' && c.text === '@')) return true;
    if (node.type === 'expansion') {
      const sub = named(node).find((c) => c.type === 'subscript');
      if (sub?.childForFieldName('index')?.text === '@') return true;
      const types = node.children.map((c) => c?.type);
      if (types.includes('!') && types.slice(-2).join() === '@,}') return true;
    }
  }
  return named(node).some(multiArgExpansion);
}

function nodeArityUncertain(node: Node): boolean {
  if (node.type === 'string') return multiArgExpansion(node);
  if (['string', 'raw_string', 'ansi_c_string', 'arithmetic_expansion', 'process_substitution', 'word', 'number'].includes(node.type)) return false;
  if (node.type === 'concatenation') return expansionSyntax(node.text).some(Boolean) || named(node).some(nodeArityUncertain);
  return true;
}

/** Whether one source word may become zero or several argv words (globs, braces, unquoted `$@`, …). */
export function arityUncertain(lit: string | null, word: ShellWord): boolean {
  return lit !== null ? expansionSyntax(word.text).some(Boolean) : nodeArityUncertain(word.node);
}

/** The literal text before the first dynamic part of a word. */
export function staticPrefix(node: Node): string {
  return prefixOf(node)[0];
}
function prefixOf(node: Node): [string, boolean] {
  if (UNRESOLVED.has(node.type)) return ['', false];
  if (node.type === 'string' || node.type === 'command_name' || node.type === 'concatenation') {
    let acc = '';
    for (const c of named(node)) {
      const [p, complete] = prefixOf(c);
      acc += p;
      if (!complete) return [acc, false];
    }
    return [acc, true];
  }
  const l = literal(node);
  return l !== null ? [l, true] : ['', false];
}

// ---- commands -----------------------------------------------------------------------------------

export interface Semantics {
  basename: string | null;
  args: (string | null)[];
  words: ShellWord[];
  uncertain: boolean;
  canBuiltin: boolean;
  canKeyword: boolean;
}

export function resolve(command: ShellCommand): Semantics {
  let nameWord = command.name;
  let words = command.words;
  // A number glued to a redirect is its descriptor, not the command's name (`0<<<'x' sh` runs sh).
  if (nameWord && isDecimal(nameWord.text) && words.length && commandRedirects(command).some((r) => r.node.startIndex === nameWord!.node.endIndex)) {
    nameWord = words[0]!;
    words = words.slice(1);
  }
  const nameLit = nameWord ? literal(nameWord.node) : null;
  const nameArity = nameWord !== null && arityUncertain(nameLit, nameWord);
  return {
    basename: nameLit !== null && !nameArity ? posix.basename(nameLit) : null,
    args: words.map((w) => literal(w.node)),
    words,
    uncertain: nameWord !== null && (nameLit === null || nameArity),
    canBuiltin: nameLit !== null && !nameLit.includes('/'),
    canKeyword: nameLit !== null && nameWord !== null && nameWord.text === nameLit && !nameLit.includes('/'),
  };
}

function shortFlags(text: string): string[] {
  if (text.length <= 1 || !text.startsWith('-') || text.startsWith('--')) return [];
  return [...text.slice(1)];
}

function literalFlags(args: (string | null)[]): Set<string> {
  const flags = new Set<string>();
  for (const a of args) {
    if (a === null) continue;
    if (a === '--') break;
    for (const f of shortFlags(a)) flags.add(f);
    if (a === '--recursive') flags.add('r');
    else if (a === '--force') flags.add('f');
  }
  return flags;
}

const rf = (flags: Set<string>): boolean => (flags.has('r') || flags.has('R')) && flags.has('f');

export const hasRecursiveForce = (c: Semantics): boolean => rf(literalFlags(c.args));

const RM_OPTIONS: [string, string][] = [
  ['-r', 'r'], ['-R', 'R'], ['-f', 'f'], ['-rf', 'rf'], ['-fr', 'rf'], ['-Rf', 'Rf'], ['-fR', 'Rf'], ['--recursive', 'r'], ['--force', 'f'],
];

function globMatch(option: string, pattern: string): boolean {
  let re = '^';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === '*') re += '.*';
    else if (ch === '?') re += '.';
    else if (ch === '[') {
      const end = pattern.indexOf(']', i + 2);
      if (end < 0) re += '\\[';
      else {
        let body = pattern.slice(i + 1, end);
        if (body.startsWith('!')) body = '^' + body.slice(1);
        re += `[${body.replace(/\\/g, '\\\\')}]`;
        i = end;
      }
    } else re += ch.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  try {
    return new RegExp(re + '$').test(option);
  } catch {
    return false;
  }
}

function pathnameCanStartOption(text: string): boolean {
  let quote: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quote !== null) {
      if (ch === quote) {
        quote = null;
        continue;
      }
      return ch === '-';
    }
    if (ch === '\\' && i + 1 < text.length) return text[i + 1] === '-';
    if (ch === "'" || ch === '"') {
      quote = ch;
      continue;
    }
    return ch === '-' || ch === '*' || ch === '?' || ch === '[';
  }
  return false;
}

function pathnameFlags(pattern: string): string[] {
  if (pattern.startsWith('-') || pattern.includes('[^') || pattern.includes('[[:')) return ['r', 'R', 'f'];
  return RM_OPTIONS.filter(([opt]) => globMatch(opt, pattern)).flatMap(([, f]) => [...f]);
}

function leadingBraceFlags(lit: string, depth = 0): [boolean, Set<string>] {
  if (!lit.startsWith('{')) return [false, new Set()];
  if (depth >= MAX_DEPTH) return [lit.includes('-'), new Set([...lit].filter((c) => 'rRf'.includes(c)))];
  let level = 0;
  for (let i = 1; i < lit.length; i++) {
    const ch = lit[i];
    if (ch === '{') level++;
    else if (ch === '}') {
      if (level === 0) return braceFlags(lit.slice(1, i), lit.slice(i + 1), depth);
      level--;
    }
  }
  return [false, new Set()];
}

function braceFlags(alternatives: string, suffix: string, depth: number): [boolean, Set<string>] {
  let canStart = false;
  const flags = new Set<string>();
  let level = 0;
  let start = 0;
  for (let i = 0; i <= alternatives.length; i++) {
    const ch = i < alternatives.length ? alternatives[i] : ',';
    if (ch === '{') level++;
    else if (ch === '}') level--;
    else if (ch === ',' && level === 0) {
      const cand = alternatives.slice(start, i) + suffix;
      if (cand.startsWith('-')) {
        canStart = true;
        for (const c of cand) if ('rRf'.includes(c)) flags.add(c);
      } else if (cand.startsWith('{')) {
        const [s, f] = leadingBraceFlags(cand, depth + 1);
        canStart ||= s;
        for (const x of f) flags.add(x);
      }
      start = i + 1;
    }
  }
  return [canStart, flags];
}

/** `rm` whose flags could expand to recursive+force (`rm -r* x`, `rm {-r,-f} x`): not vouched for. */
function uncertainRecursiveForce(c: Semantics): boolean {
  const flags = literalFlags(c.args);
  for (let i = 0; i < c.args.length; i++) {
    const lit = c.args[i]!;
    const word = c.words[i]!;
    if (lit === '--') break;
    if (lit === null || !arityUncertain(lit, word)) continue;
    const [pathname, brace] = expansionSyntax(word.text);
    const [braceStart, braceF] = leadingBraceFlags(lit);
    const canStart = lit.startsWith('-') || (pathname && pathnameCanStartOption(word.text)) || (brace && braceStart);
    let found: Iterable<string> = [];
    if (pathname && canStart) found = pathnameFlags(lit);
    else if (lit.startsWith('-')) found = [...lit].filter((ch) => 'rRf'.includes(ch));
    else if (brace) found = braceF;
    for (const f of found) flags.add(f);
  }
  return rf(flags);
}

// ---- directly executed source (sh -c, eval) -----------------------------------------------------

export const MAX_DEPTH = 8;
const RUNNERS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'ash']);
const SHORT_RUNNER = new Set('abefhkmnptuvxBCDHPcilrsoO');
const LONG_WITH_ARG = new Set(['--rcfile', '--init-file']);
const LONG_NO_ARG = new Set(['--debugger', '--login', '--noediting', '--noprofile', '--norc', '--posix', '--restricted', '--verbose']);
const NON_OPTION_TYPES = new Set(['arithmetic_expansion', 'process_substitution']);

export const isRunner = (c: Semantics): boolean => c.basename !== null && RUNNERS.has(c.basename);
const isOptionWord = (l: string): boolean => l.length > 1 && (l[0] === '-' || l[0] === '+');
const isShortGroup = (l: string): boolean => isOptionWord(l) && l[1] !== '-' && l[1] !== '+';
const invalidOption = (l: string): boolean => l.startsWith('++') || l.startsWith('-+') || l.startsWith('+-');

function runnerValueCount(l: string, basename: string): number | null {
  if (l.startsWith('--') && basename !== 'bash') return null;
  if (LONG_WITH_ARG.has(l)) return 1;
  if (LONG_NO_ARG.has(l)) return 0;
  if (l.startsWith('--')) return null;
  const flags = l.slice(1);
  if (basename !== 'bash' && flags.includes('D')) return null;
  if ([...flags].some((f) => !SHORT_RUNNER.has(f))) return null;
  if ([...flags.slice(0, -1)].some((f) => f === 'o' || f === 'O')) return null;
  return flags.endsWith('o') || flags.endsWith('O') ? 1 : 0;
}

type Source = [has: boolean, source: string | null, uncertain: boolean];
const NONE: Source = [false, null, false];

/** The `-c` script of a shell runner, following its option rules (grouped flags, `-o name`, `--`). */
function scriptOperand(c: Semantics): Source {
  const basename = c.basename!;
  let hasFlag = false;
  let noexec = false;
  let dump = false;
  let ended = false;
  let i = 0;
  const off = (): boolean => noexec || dump;
  while (i < c.args.length) {
    const lit = c.args[i]!;
    const word = c.words[i]!;
    if (arityUncertain(lit, word)) {
      if (ended && off()) return NONE;
      if (ended && !hasFlag) return NONE;
      return [hasFlag, null, true];
    }
    if (lit === null) {
      if (hasFlag) return off() ? NONE : [true, null, false];
      if (ended || NON_OPTION_TYPES.has(word.type)) return NONE;
      return [false, null, i + 1 < c.args.length];
    }
    if (!ended) {
      if (lit === '--' || lit === '-') {
        ended = true;
        i++;
        continue;
      }
      if (isOptionWord(lit)) {
        if (invalidOption(lit)) return NONE;
        const count = runnerValueCount(lit, basename);
        if (count === null) return [hasFlag, null, true];
        if (isShortGroup(lit) && lit.slice(1).includes('c')) hasFlag = true;
        if (isShortGroup(lit) && lit.slice(1).includes('n')) noexec = lit.startsWith('-');
        if (basename === 'bash' && isShortGroup(lit) && lit.slice(1).includes('D')) dump = true;
        if (count) {
          const v = i + 1;
          if (v >= c.args.length) return NONE;
          if (NON_OPTION_TYPES.has(c.words[v]!.type) || arityUncertain(c.args[v]!, c.words[v]!)) return [hasFlag, null, true];
        }
        i += count + 1;
        continue;
      }
    }
    if (hasFlag) return off() ? NONE : [true, lit, false];
    return NONE;
  }
  return off() ? NONE : [hasFlag, null, false];
}

function evalCommand(c: Semantics): [Semantics | null, boolean] {
  let cmd = c;
  for (let depth = 0; depth <= MAX_DEPTH; depth++) {
    if (!cmd.canBuiltin) return [null, false];
    if (cmd.basename === 'eval') return [cmd, false];
    if (cmd.basename !== 'builtin' && cmd.basename !== 'command') return [null, false];
    if (depth === MAX_DEPTH) return [null, true];
    let i = 0;
    if (cmd.basename === 'command') {
      while (i < cmd.args.length && cmd.args[i] === '-p') i++;
      if (i < cmd.args.length && cmd.args[i] === '--') i++;
    } else if (cmd.args[0] === '--') i = 1;
    if (i >= cmd.args.length) return [null, false];
    const target = cmd.args[i]!;
    if (target === null || arityUncertain(target, cmd.words[i]!)) return [null, true];
    if (target.startsWith('-') || target.includes('/')) return [null, false];
    cmd = { ...cmd, basename: target, args: cmd.args.slice(i + 1), words: cmd.words.slice(i + 1), canKeyword: false };
  }
  return [null, true];
}

/** A redirect that applies to a command, with the descriptor it redirects (normalized: `01` is `1`). */
export interface Redirect {
  node: Node;
  fd: string;
}

const normalizeFd = (fd: string): string => (isDecimal(fd) ? String(BigInt(fd)) : fd);
/** The last whitespace-separated field of a text, when it is a number. */
const trailingNumber = (text: string): string | null => {
  const last = text.trim().split(/\s+/).at(-1) ?? '';
  return isDecimal(last) ? last : null;
};

/**
 * The descriptor a redirect redirects: its own digits (`2>x`), else a number glued before it that
 * the grammar parsed apart (`sh 0<<<'…'`: the number a word of the command), else 0 or 1 by direction.
 */
function redirectFd(command: ShellCommand, r: Node): string {
  const text = r.text.trimStart();
  const digits = /^[0-9]+/.exec(text)?.[0];
  if (digits) return digits;
  const previous = r.previousNamedSibling;
  if (previous && previous.endIndex === r.startIndex) {
    const n = trailingNumber(previous.text);
    if (n !== null) return n;
  }
  for (const w of command.words) if (w.node.endIndex === r.startIndex && isDecimal(w.text)) return w.text;
  return text.startsWith('<') ? '0' : '1';
}

function appendRedirects(out: Redirect[], command: ShellCommand, r: Node, fd?: string): void {
  let first = true;
  for (const n of redirectTree(r)) {
    out.push({ node: n, fd: normalizeFd(first && fd !== undefined ? fd : redirectFd(command, n)) });
    first = false;
  }
}

/**
 * The descriptor a command ends with when the grammar broke the statement into an ERROR and the
 * redirects after it (`… 0<<<'x'` parsed apart): the number the ERROR ends with, glued to the next node.
 */
function adjacentTrailingFd(command: ShellCommand, parent: Node, sibling: Node): string | null {
  if (sibling.startIndex !== parent.endIndex) return null;
  return trailingNumber(parent.text.slice(command.node.endIndex - parent.startIndex));
}

/**
 * The redirects that apply to a command, in source order: its own, those of every node up to
 * `enclosing` (a pipeline stage: `{ cat; } <<< x | sh`), of its redirected statements, and a last
 * pipeline stage's; nested redirects included.
 */
export function commandRedirects(command: ShellCommand, enclosing?: Node): Redirect[] {
  const out: Redirect[] = [];
  let container: Node = command.node;
  let reached = enclosing === undefined;
  for (;;) {
    for (const c of named(container)) if (c.type.includes('redirect') && c.type !== 'redirected_statement') appendRedirects(out, command, c);
    if (enclosing && container.equals(enclosing)) reached = true;
    const parent: Node | null = container.parent;
    if (!reached && parent) container = parent;
    else if (parent?.type === 'redirected_statement') container = parent;
    else if (parent?.type === 'pipeline' && named(parent).at(-1)?.equals(container)) container = parent;
    else break;
  }
  const parent = command.node.parent;
  const sibling = parent?.nextNamedSibling ?? null;
  if (parent?.type === 'ERROR' && sibling) {
    const fd = adjacentTrailingFd(command, parent, sibling);
    if (fd !== null) {
      for (const c of named(parent)) if (c.type.includes('redirect')) appendRedirects(out, command, c);
      for (const c of named(sibling)) if (c.type.includes('redirect')) appendRedirects(out, command, c, fd);
    }
  }
  return out.sort((x, y) => x.node.startIndex - y.node.startIndex);
}

/** Whether a number word of a command is the descriptor of a redirect glued to it (`sh 0<<<'…'`). */
function isDescriptorWord(arg: string, w: ShellWord, redirects: Redirect[]): boolean {
  for (const r of redirects) {
    if (normalizeFd(arg) !== r.fd) continue;
    if (w.node.endIndex === r.node.startIndex) return true;
    const previous = r.node.previousNamedSibling;
    if (previous?.type === 'ERROR' && previous.text === '<<' && w.node.endIndex === previous.startIndex && previous.endIndex === r.node.startIndex) return true;
  }
  return false;
}

/** The command without the number words that are its redirects' descriptors (argv as the shell builds it). */
function withoutDescriptorWords(command: ShellCommand, c: Semantics): Semantics {
  const redirects = commandRedirects(command);
  const keep = c.args.map((a, i) => !(a !== null && isDecimal(a) && isDecimal(c.words[i]!.text) && isDescriptorWord(a, c.words[i]!, redirects)));
  if (keep.every(Boolean)) return c;
  return { ...c, args: c.args.filter((_, i) => keep[i]), words: c.words.filter((_, i) => keep[i]) };
}

/**
 * Shell source the command runs directly: a runner's `-c` script, `eval`'s joined arguments, or
 * what a runner reads as its script from a here-document or here-string.
 */
export function executedSource(c: Semantics, command: ShellCommand): Source {
  const runner = withoutDescriptorWords(command, c);
  if (isRunner(runner)) {
    const s = scriptOperand(runner);
    if (s[0] || s[2]) return s;
  }
  const [ev, evUncertain] = evalCommand(runner);
  if (evUncertain) return [true, null, true];
  if (!ev) return stdinScript(runner, command);
  let args = ev.args;
  let words = ev.words;
  if (args[0] === '--') {
    args = args.slice(1);
    words = words.slice(1);
  } else if (args[0] != null && args[0].startsWith('-')) return NONE;
  if (!args.length) return NONE;
  if (args.some((a, i) => a === null || arityUncertain(a, words[i]!))) return [true, null, true];
  return [true, args.join(' '), false];
}

function stdinScript(c: Semantics, command: ShellCommand): Source {
  if (!isRunner(c)) return NONE;
  const [has, source, unsure] = stdinSource(command);
  if (!has) return NONE;
  const reads = runnerReadsStdin(c);
  if (reads === null) return [true, null, true];
  if (!reads) return NONE;
  return [true, source, unsure];
}

// ---- standard input and pipelines (what a runner reads as its script) ---------------------------

/** Whether a runner without `-c` reads its script from standard input (`sh`, `sh -s`, `bash -`), or null when unsure. */
export function runnerReadsStdin(c: Semantics): boolean | null {
  let stdinSelected = false;
  let noexec = false;
  let dump = false;
  let ended = false;
  let i = 0;
  while (i < c.args.length) {
    const lit = c.args[i]!;
    const word = c.words[i]!;
    if (lit === null || arityUncertain(lit, word)) {
      if (ended) return noexec || dump ? false : stdinSelected ? true : null;
      return null;
    }
    if (!ended) {
      if (lit === '--' || lit === '-') {
        ended = true;
        i++;
        continue;
      }
      if (isOptionWord(lit)) {
        if (invalidOption(lit)) return false;
        const count = runnerValueCount(lit, c.basename!);
        if (count === null) return null;
        if (isShortGroup(lit) && lit[0] === '-' && lit.slice(1).includes('s')) stdinSelected = true;
        if (isShortGroup(lit) && lit.slice(1).includes('n')) noexec = lit.startsWith('-');
        if (c.basename === 'bash' && isShortGroup(lit) && lit.slice(1).includes('D')) dump = true;
        if (count && i + count >= c.args.length) return false;
        i += count + 1;
        continue;
      }
    }
    return noexec || dump ? false : stdinSelected;
  }
  return !(noexec || dump);
}

/** A redirect's text without its descriptor digits. */
const operatorText = (r: Node): string => r.text.replace(/^[0-9]+/, '');

function destination(r: Node): string | null {
  const d = r.childForFieldName('destination');
  return d ? literal(d) : null;
}

function fdAlias(path: string | null): string | null {
  if (path === null) return null;
  const named: Record<string, string> = { '/dev/stdin': '0', '/dev/stdout': '1', '/dev/stderr': '2' };
  if (named[path]) return named[path];
  for (const prefix of ['/dev/fd/', '/proc/self/fd/']) {
    const rest = path.startsWith(prefix) ? path.slice(prefix.length) : null;
    if (rest !== null && /^\d+$/.test(rest)) return String(Number(rest));
  }
  return null;
}

/** A here-string, also as the grammar splits one after a glued number (`<<` ERROR, then `< '…'`). */
function isHerestring(r: Node, text: string): boolean {
  if (r.type === 'herestring_redirect' || text.startsWith('<<<')) return true;
  const previous = r.previousNamedSibling;
  return previous?.type === 'ERROR' && previous.endIndex === r.startIndex && previous.text === '<<' && text.startsWith('<');
}

function herestring(r: Node): Source {
  const values = named(r).filter((ch) => ch.type !== 'file_descriptor' && ch.type !== 'ERROR' && !ch.type.includes('redirect'));
  if (!values.length) return [true, null, true];
  const lit = literal(values[0]!);
  return [true, lit, lit === null];
}

function heredoc(r: Node): Source {
  const kids = named(r);
  const start = kids.find((k) => k.type === 'heredoc_start');
  const body = kids.find((k) => k.type === 'heredoc_body');
  const end = kids.find((k) => k.type === 'heredoc_end');
  if (!start || !body || !end) return [true, null, true];
  // An unquoted delimiter expands the body: only a body without expansions or escapes is literal.
  const quoted = start.text !== end.text;
  if (!quoted && (named(body).length > 0 || body.text.includes('\\'))) return [true, null, true];
  return [true, body.text, false];
}

const UNSURE: Source = [true, null, true];

/** What the command reads on standard input after its redirects (`initial`: a pipe's output; `enclosing`: its pipeline stage). */
export function stdinSource(command: ShellCommand, initial: Source = NONE, enclosing?: Node): Source {
  const sources = new Map<string, Source>(initial[0] ? [['0', initial]] : []);
  for (const { node: r, fd } of commandRedirects(command, enclosing)) {
    const text = operatorText(r);
    if (text.startsWith('<&') || text.startsWith('>&')) {
      const dest = destination(r);
      if (dest === '-') sources.delete(fd);
      else if (dest !== null && isDecimal(dest)) {
        const from = sources.get(normalizeFd(dest));
        if (from) sources.set(fd, from);
        else sources.delete(fd);
      } else if (fd === '0' || sources.size) sources.set(fd, UNSURE);
      continue;
    }
    if (text.startsWith('&>')) {
      const dest = destination(r);
      const alias = fdAlias(dest);
      const from = alias !== null ? sources.get(alias) : undefined;
      if (from) {
        sources.set('1', from);
        sources.set('2', from);
      } else if (dest === null && sources.size) {
        sources.set('1', UNSURE);
        sources.set('2', UNSURE);
      } else {
        sources.delete('1');
        sources.delete('2');
      }
      continue;
    }
    if (isHerestring(r, text)) {
      sources.set(fd, herestring(r));
      continue;
    }
    if (r.type === 'heredoc_redirect') {
      sources.set(fd, heredoc(r));
      continue;
    }
    const dest = destination(r);
    const alias = fdAlias(dest);
    const from = alias !== null ? sources.get(alias) : undefined;
    if (from) sources.set(fd, from);
    else if (dest === null && (fd === '0' || sources.size)) sources.set(fd, UNSURE);
    else sources.delete(fd);
  }
  return sources.get('0') ?? NONE;
}

/** Whether the command's standard output still goes down its pipe (null: unsure). */
export function stdoutReachesPipe(command: ShellCommand, enclosing?: Node): boolean | null {
  const out = new Map<string, boolean | null>([['1', true], ['2', false]]);
  const of = (fd: string): boolean | null => (out.has(fd) ? out.get(fd)! : false);
  for (const { node: r, fd } of commandRedirects(command, enclosing)) {
    const text = operatorText(r);
    const dest = destination(r);
    if (text.startsWith('&>')) {
      const alias = fdAlias(dest);
      const v = alias !== null ? of(alias) : dest === null ? null : false;
      out.set('1', v);
      out.set('2', v);
    } else if (text.startsWith('>&') || text.startsWith('<&')) {
      if (dest === '-') out.set(fd, false);
      else if (dest !== null && isDecimal(dest)) out.set(fd, of(normalizeFd(dest)));
      else out.set(fd, null);
    } else {
      const alias = fdAlias(dest);
      out.set(fd, alias !== null ? of(alias) : dest === null ? null : false);
    }
  }
  return out.get('1')!;
}

/** What a pipeline stage's command writes down the pipe, when it is static (echo, printf %s, cat of a here-doc). */
export function pipelineOutput(command: ShellCommand, c: Semantics, stage: Node): Source {
  const reaches = stdoutReachesPipe(command, stage);
  if (reaches === false) return NONE;
  if (reaches === null || c.uncertain) return UNSURE;
  if (c.basename === 'echo') {
    if (c.args.some((a, i) => a === null || arityUncertain(a, c.words[i]!) || a.includes('\\'))) return UNSURE;
    const args = c.args as string[];
    if (args[0]?.startsWith('-')) return UNSURE;
    return [true, args.join(' ') + '\n', false];
  }
  if (c.basename === 'printf') return printfOutput(c);
  if (c.basename === 'cat' && !c.args.length) {
    const src = stdinSource(command, NONE, stage);
    if (src[0]) return src;
  }
  return UNSURE;
}

function printfOutput(c: Semantics): Source {
  if (!c.args.length) return [true, '', false];
  const fi = c.args[0] === '--' ? 1 : 0;
  if (fi >= c.args.length) return [true, '', false];
  const fmt = c.args[fi]!;
  if (fmt === null || arityUncertain(fmt, c.words[fi]!)) return [true, null, true];
  if ((fi === 0 && fmt.startsWith('-')) || fmt.includes('\\')) return [true, null, true];
  const values = c.args.slice(fi + 1).map((a, i) => (a !== null && !arityUncertain(a, c.words[fi + 1 + i]!) ? a : null));
  let out = '';
  let vi = 0;
  let consumes = false;
  for (let i = 0; i < fmt.length; i++) {
    if (fmt[i] !== '%') {
      out += fmt[i];
      continue;
    }
    if (i + 1 >= fmt.length) return [true, null, true];
    const conv = fmt[i + 1];
    if (conv === '%') out += '%';
    else if (conv === 's' && vi < values.length) {
      const v = values[vi++];
      if (v == null) return [true, null, true];
      consumes = true;
      out += v;
    } else return [true, null, true];
    i++;
  }
  if (consumes && vi !== values.length) return [true, null, true];
  return [true, out, false];
}

/**
 * The script a runner reads from its pipe (`… | sh`), or nothing when it runs its own `-c` script
 * (that script may read the pipe in turn: rails.ts follows it with the pipe as its input).
 */
export function pipedSource(command: ShellCommand, c: Semantics, piped: Source, stage: Node): Source {
  if (!piped[0]) return NONE;
  const runner = withoutDescriptorWords(command, c);
  if (!isRunner(runner)) return NONE;
  const [hasScript, , scriptUnsure] = scriptOperand(runner);
  if (hasScript) return NONE;
  if (scriptUnsure) return UNSURE;
  const reads = runnerReadsStdin(runner);
  if (reads === false) return NONE;
  const [has, source, unsure] = stdinSource(command, piped, stage);
  if (!has) return NONE;
  if (reads === null || unsure) return UNSURE;
  return [true, source, false];
}

// ---- the recursive force-delete scan (pattern analyzer) -----------------------------------------

export interface Signal {
  matched: boolean;
  uncertain: boolean;
}

async function programSignal(program: ShellProgram, depth: number): Promise<Signal> {
  let uncertain = false;
  for (const command of commands(program)) {
    const c = resolve(command);
    if (hasRecursiveForce(c)) {
      if (c.basename === 'rm') return { matched: true, uncertain: false };
      // The destructive flag shape on a verb we cannot vouch for; keep looking for a concrete match.
      if (c.basename === null || command.hasError) uncertain = true;
    } else if (c.basename === 'rm' && uncertainRecursiveForce(c)) uncertain = true;
    const nested = await nestedSignal(command, c, depth);
    if (nested.matched) return nested;
    uncertain ||= nested.uncertain;
  }
  return { matched: false, uncertain };
}

async function nestedSignal(command: ShellCommand, c: Semantics, depth: number): Promise<Signal> {
  const sourceCommand = isRunner(c) || ['eval', 'builtin', 'command'].includes(c.basename ?? '');
  const [has, inner, uncertain] = executedSource(c, command);
  if (has && inner !== null) {
    if (depth >= MAX_DEPTH) return { matched: false, uncertain: true };
    const program = await parseShell(inner);
    if (program) {
      const n = await programSignal(program, depth + 1);
      if (n.matched) return n;
      if (n.uncertain) return { matched: false, uncertain: true };
    }
  }
  if (uncertain || (sourceCommand && command.hasError)) return { matched: false, uncertain: true };
  return { matched: false, uncertain: false };
}

/** Whether `source` runs a recursive force-delete (matched) or may (uncertain). */
export async function scanRecursiveDelete(source: string): Promise<Signal> {
  const program = await parseShell(source);
  if (!program) return { matched: false, uncertain: false };
  return programSignal(program, 0);
}
