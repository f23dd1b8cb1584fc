// PolicyRailSecurityAnalyzer (OpenHands 1.58 `defense_in_depth/policy_rails.py`): rules over shell
// structure, each executable segment on its own so text from two fields never forms one match.
// Rails: fetch-to-exec (curl/wget output piped into a later command), raw-disk-op (mkfs, dd of=/dev/…),
// catastrophic-delete (rm -rf of /, ~, /etc, /usr, /var, /home, /boot). A rail → HIGH; shell
// structure that matters but cannot be resolved → UNKNOWN; otherwise LOW (no rail, not "safe").
// Wrappers (sudo, env, timeout, nice, …) are looked through with 1.58's option tables.
// How shell source is followed (nested scripts, piped input) is written in shell.ts.
import { posix } from 'node:path';
import type { Node } from 'web-tree-sitter';
import type { ActionEvent, SecurityRisk } from '../../../api/events/index.ts';
import { execSegments } from './extract.ts';
import {
  arityUncertain,
  commands,
  executedSource,
  hasRecursiveForce,
  isRunner,
  MAX_DEPTH,
  parseShell,
  pipedSource,
  pipelineOutput,
  pipelines,
  resolve,
  staticPrefix,
  stdinSource,
  stdoutReachesPipe,
  type Semantics,
  type ShellCommand,
  type ShellProgram,
} from './shell.ts';

type Source = ReturnType<typeof stdinSource>;

export interface RailVerdict {
  risk: SecurityRisk;
  rule?: 'fetch-to-exec' | 'raw-disk-op' | 'catastrophic-delete';
}

interface Signals {
  fetch: boolean;
  rawDisk: boolean;
  delete: boolean;
  uncertain: boolean;
}

const FETCH = new Set(['curl', 'wget']);
const CRITICAL_ROOTS = ['/etc', '/usr', '/var', '/home', '/boot'];
const WRAPPERS: Record<string, Record<string, number>> = {
  env: { '-i': 0, '--ignore-environment': 0, '-u': 1, '--unset': 1, '-C': 1, '--chdir': 1 },
  sudo: { '-E': 0, '-H': 0, '-i': 0, '-n': 0, '-S': 0, '-u': 1, '--user': 1, '-g': 1, '--group': 1, '-D': 1, '--chdir': 1 },
  builtin: {},
  command: { '-p': 0, '-v': 0, '-V': 0 },
  time: { '-p': 0 },
  timeout: { '--foreground': 0, '--preserve-status': 0, '--verbose': 0, '-k': 1, '--kill-after': 1, '-s': 1, '--signal': 1 },
  exec: { '-a': 1, '-c': 0, '-l': 0 },
  nice: { '-n': 1, '--adjustment': 1 },
  nohup: {},
  chroot: { '--userspec': 1, '--groups': 1, '--skip-chdir': 0 },
  busybox: {},
  toybox: {},
  setsid: { '-f': 0, '--fork': 0, '-c': 0, '--ctty': 0, '-w': 0, '--wait': 0 },
  stdbuf: { '-i': 1, '--input': 1, '-o': 1, '--output': 1, '-e': 1, '--error': 1 },
  strace: { '-f': 0, '-o': 1, '-e': 1, '-p': 1, '-s': 1 },
};
const ASSIGNMENT_WRAPPERS = new Set(['env', 'sudo']);
const PREFIX_OPERANDS: Record<string, number> = { timeout: 1, chroot: 1 };
const BUILTIN_TARGETS = new Set(['builtin', 'command', 'exec']);

function optionValueCount(arg: string, options: Record<string, number>): number | null {
  if (arg in options) return options[arg]!;
  if (arg.startsWith('--')) {
    const eq = arg.indexOf('=');
    return eq >= 0 && arg.slice(0, eq) in options ? 0 : null;
  }
  if (!arg.startsWith('-') || arg.length < 3) return null;
  const flags = arg.slice(1);
  for (let i = 0; i < flags.length; i++) {
    const n = options[`-${flags[i]}`];
    if (n === undefined) return null;
    if (n) return i < flags.length - 1 ? 0 : n;
  }
  return 0;
}

/** The command a wrapper chain runs (`sudo -u x env A=1 timeout 5 rm …` → rm …), or uncertain. */
function unwrap(start: Semantics): Semantics {
  let c = start;
  const unsure = (): Semantics => ({ ...c, uncertain: true });
  while (c.basename !== null && c.basename in WRAPPERS) {
    if ((c.basename === 'builtin' || c.basename === 'command') && !c.canBuiltin) break;
    const wrapper = c.basename;
    const options = WRAPPERS[wrapper]!;
    let i = 0;
    while (i < c.args.length) {
      const arg = c.args[i]!;
      const word = c.words[i]!;
      if (arityUncertain(arg, word)) return unsure();
      if (arg === null) {
        const prefix = staticPrefix(word.node);
        if (ASSIGNMENT_WRAPPERS.has(wrapper) && !prefix.startsWith('-') && prefix.includes('=')) break;
        if (prefix.startsWith('--') && prefix.includes('=') && optionValueCount(prefix, options) === 0) {
          i++;
          continue;
        }
        return unsure();
      }
      if (arg === '--') {
        i++;
        break;
      }
      if (!arg.startsWith('-') || arg === '-') break;
      const n = optionValueCount(arg, options);
      if (n === null || i + n >= c.args.length) return unsure();
      if (wrapper === 'command' && (arg.slice(1).includes('v') || arg.slice(1).includes('V'))) return c;
      for (let v = i + 1; v <= i + n; v++) if (arityUncertain(c.args[v]!, c.words[v]!)) return unsure();
      i += n + 1;
    }
    if (wrapper === 'env' && c.args[i] === '-') i++;
    if (ASSIGNMENT_WRAPPERS.has(wrapper)) {
      while (i < c.args.length) {
        const arg = c.args[i]!;
        const word = c.words[i]!;
        if (arityUncertain(arg, word)) return unsure();
        const prefix = arg ?? staticPrefix(word.node);
        if (!prefix.includes('=')) {
          if (arg === null) return unsure();
          break;
        }
        i++;
      }
    }
    const prefixCount = PREFIX_OPERANDS[wrapper] ?? 0;
    for (let v = i; v < Math.min(i + prefixCount, c.args.length); v++) if (arityUncertain(c.args[v]!, c.words[v]!)) return unsure();
    i += prefixCount;
    if (i >= c.args.length) return c;
    const target = c.args[i]!;
    if (target === null || arityUncertain(target, c.words[i]!)) return unsure();
    if (wrapper === 'builtin' && !BUILTIN_TARGETS.has(target)) return c;
    c = {
      ...c,
      basename: posix.basename(target),
      args: c.args.slice(i + 1),
      words: c.words.slice(i + 1),
      canBuiltin: c.canBuiltin && (wrapper === 'builtin' || wrapper === 'command' || (wrapper === 'time' && c.canKeyword)) && !target.includes('/'),
      canKeyword: c.canKeyword && wrapper === 'time' && !target.includes('/') && c.words[i]!.text === target,
    };
  }
  return c;
}

const isFetch = (c: Semantics): boolean => FETCH.has((c.basename ?? '').toLowerCase());

/** `direct` (a stage's own command), `indirect` (inside a substitution) or `captured` (into a variable). */
function role(node: Node, stage: Node): 'direct' | 'indirect' | 'captured' {
  if (node.equals(stage)) return 'direct';
  let inSub = false;
  let inAssign = false;
  for (let p = node.parent; p; p = p.parent) {
    if (p.type === 'variable_assignment' && inSub) inAssign = true;
    if (p.type === 'command_substitution' || p.type === 'process_substitution') inSub = true;
    if (p.type === 'command') {
      if (inAssign && !p.namedChildren.some((ch) => ch?.type === 'command_name')) return 'captured';
      return 'indirect';
    }
    if (p.equals(stage)) return inAssign ? 'captured' : inSub ? 'indirect' : 'direct';
  }
  return 'indirect';
}

function forwardsSubstitution(direct: [ShellCommand, Semantics] | undefined, nested: Node): boolean | null {
  if (!direct) return null;
  const [command, c] = direct;
  if (c.basename !== 'echo' && c.basename !== 'printf') return null;
  const idx = c.words.findIndex((w) => w.node.startIndex <= nested.startIndex && nested.endIndex <= w.node.endIndex);
  if (idx < 0) return false;
  const reaches = stdoutReachesPipe(command);
  if (reaches !== true) return reaches;
  if (c.basename === 'echo') return true;
  if (idx === 0 || !c.args.length) return false;
  const fmt = c.args[0];
  if (fmt == null || fmt.includes('\\')) return null;
  for (let i = 0; i < fmt.length; i++) {
    if (fmt[i] !== '%') continue;
    if (i + 1 >= fmt.length) return false;
    if (fmt[i + 1] !== '%') return true;
    i++;
  }
  return false;
}

const couldBeRunner = (c: Semantics): boolean => isRunner(c) || c.uncertain || c.basename === null;
const directIn = (stage: Node, group: [ShellCommand, Semantics][]) => group.filter(([c]) => role(c.node, stage) === 'direct' && c.name !== null);

/**
 * A stage's static output piped into a runner that reads it as its script (`echo 'rm -rf /' | sh`):
 * scanned as shell; into a runner's own `-c` script, that script is scanned with the pipe as its input.
 */
async function scanPipedSources(stages: Node[], groups: [ShellCommand, Semantics][][], depth: number, s: Signals): Promise<void> {
  for (let i = 0; i < groups.length - 1; i++) {
    const producers = directIn(stages[i]!, groups[i]!);
    const consumers = directIn(stages[i + 1]!, groups[i + 1]!);
    if (!consumers.length) continue;
    if (producers.length !== 1) {
      if (consumers.some(([, c]) => couldBeRunner(c))) s.uncertain = true;
      continue;
    }
    const output = pipelineOutput(...producers[0]!, stages[i]!);
    if (!output[0]) continue;
    if (consumers.length !== 1) {
      if (consumers.some(([, c]) => couldBeRunner(c))) s.uncertain = true;
      continue;
    }
    const [command, c] = consumers[0]!;
    if (!isRunner(c) && couldBeRunner(c)) {
      s.uncertain = true;
      continue;
    }
    const [has, source, unsure] = pipedSource(command, c, output, stages[i + 1]!);
    if (unsure) s.uncertain = true;
    if (has) await scanNested(source, depth, s);
    else await scanPipedScript(command, c, output, stages[i + 1]!, depth, s);
  }
}

/** A runner's own script (`… | sh -c 'sh'`), scanned with the pipe's output as its standard input. */
async function scanPipedScript(command: ShellCommand, c: Semantics, piped: Source, stage: Node, depth: number, s: Signals): Promise<void> {
  const [has, script, unsure] = executedSource(c, command);
  if (unsure) s.uncertain = true;
  if (!has) return;
  const input = stdinSource(command, piped, stage);
  if (!input[0]) return;
  await scanNested(script, depth, s, input);
}

/** A program run with `input` on its standard input: its one command's runner reading it runs it as shell. */
async function scanInheritedInput(program: ShellProgram, cmds: [ShellCommand, Semantics][], input: Source, depth: number, s: Signals): Promise<void> {
  const found: (string | null)[] = [];
  for (const [command, c] of cmds) {
    const [has, script, unsure] = pipedSource(command, c, input, program.root);
    if (unsure) s.uncertain = true;
    if (has) found.push(script);
  }
  if (!found.length) return;
  if (cmds.length !== 1 || found.length !== 1) {
    s.uncertain = true;
    return;
  }
  await scanNested(found[0]!, depth, s);
}

/**
 * The pipeline's stages with the command they run; a pipeline the grammar parsed inside a
 * here-document's redirect (`cat <<'EOF' | sh`) gets the command that owns the here-document as its
 * first stage.
 */
function pipelineStages(pipeline: Node, cmds: [ShellCommand, Semantics][]): [Node[], [ShellCommand, Semantics][][]] {
  const stages = named(pipeline);
  const groups = stages.map((stage) => cmds.filter(([c]) => c.node.startIndex >= stage.startIndex && c.node.startIndex < stage.endIndex && c.node.endIndex <= stage.endIndex));
  const leading = leadingHeredocSource(pipeline, cmds);
  if (leading) {
    stages.unshift(leading[0].node);
    groups.unshift([leading]);
  }
  return [stages, groups];
}

function leadingHeredocSource(pipeline: Node, cmds: [ShellCommand, Semantics][]): [ShellCommand, Semantics] | undefined {
  if (!pipeline.text.trimStart().startsWith('|')) return undefined;
  const redirect = pipeline.parent;
  const statement = redirect?.parent;
  if (redirect?.type !== 'heredoc_redirect' || statement?.type !== 'redirected_statement') return undefined;
  const body = statement.childForFieldName('body');
  if (body?.type !== 'command') return undefined;
  return cmds.find(([c]) => c.node.equals(body));
}

/**
 * A compound command (`{ sh; }`, `(bash)`) given a here-document or here-string, with a runner in
 * it: which command reads it is not modelled, so the segment is not vouched for.
 */
function unmodeledCompoundSource(program: ShellProgram, cmds: [ShellCommand, Semantics][]): boolean {
  const stack: Node[] = [program.root];
  while (stack.length) {
    const node = stack.pop()!;
    if (node.type === 'redirected_statement') {
      const body = node.childForFieldName('body');
      if (
        body && body.type !== 'command' &&
        (program.source.slice(body.endIndex, node.endIndex).includes('<<<') || named(node).some((c) => c.type.includes('redirect') && inlineSource(c))) &&
        cmds.some(([c, sem]) => body.startIndex <= c.node.startIndex && c.node.endIndex <= body.endIndex && isRunner(sem))
      ) return true;
    }
    stack.push(...named(node));
  }
  return false;
}

function inlineSource(r: Node): boolean {
  if (r.type === 'heredoc_redirect' || r.type === 'herestring_redirect' || r.text.replace(/^[0-9]+/, '').startsWith('<<<')) return true;
  return named(r).some((c) => c.type.includes('redirect') && inlineSource(c));
}

const named = (n: Node): Node[] => n.namedChildren.filter((c): c is Node => c !== null);

async function scanFetchPipelines(program: ShellProgram, cmds: [ShellCommand, Semantics][], depth: number, s: Signals): Promise<void> {
  for (const pipeline of pipelines(program)) {
    const [stages, groups] = pipelineStages(pipeline.node, cmds);
    await scanPipedSources(stages, groups, depth, s);
    for (let i = 0; i < groups.length - 1; i++) {
      const stage = stages[i]!;
      const hasRhs = groups.slice(i + 1).some((g) => g.some(([c]) => c.name !== null && c.name.text !== ''));
      if (!hasRhs) {
        if ((pipeline.hasError || !pipeline.complete) && groups[i]!.some(([, c]) => isFetch(c))) s.uncertain = true;
        continue;
      }
      const direct = groups[i]!.find(([c]) => role(c.node, stage) === 'direct' && c.name !== null);
      for (const [command, c] of groups[i]!) {
        const r = role(command.node, stage);
        if (r === 'captured') continue;
        if (r === 'indirect') {
          if (isFetch(c)) {
            const f = forwardsSubstitution(direct, command.node);
            if (f) {
              s.fetch = true;
              return;
            }
            if (f === null) s.uncertain = true;
          }
          continue;
        }
        const [has, , unsure] = executedSource(c, command);
        if (has || unsure) s.uncertain = true;
        if (isFetch(c)) {
          s.fetch = true;
          return;
        }
        if (c.uncertain) s.uncertain = true;
      }
    }
  }
}

function absolute(path: string): string | null {
  if (!path.startsWith('/')) return null;
  return '/' + posix.normalize(path).replace(/^\/+/, '').replace(/\/$/, '');
}

const isDevice = (path: string): boolean => absolute(path)?.startsWith('/dev/') ?? false;

function scanRawDisk(c: Semantics, s: Signals): void {
  const base = c.basename?.toLowerCase() ?? null;
  if (base === 'mkfs' || base?.startsWith('mkfs.')) {
    s.rawDisk = true;
    return;
  }
  c.args.forEach((arg, i) => {
    if (s.rawDisk) return;
    if (arg === null) {
      if (base === 'dd') s.uncertain = true;
      return;
    }
    const eq = arg.indexOf('=');
    const deviceOut = eq >= 0 && arg.slice(0, eq).toLowerCase() === 'of' && isDevice(arg.slice(eq + 1));
    if (base === 'dd' && deviceOut) {
      s.rawDisk = true;
      return;
    }
    if (base === 'dd' && arityUncertain(arg, c.words[i]!)) s.uncertain = true;
    if (c.uncertain && (deviceOut || isDevice(arg))) s.uncertain = true;
  });
}

function isCritical(path: string, wordText: string): boolean {
  const folded = path.toLowerCase();
  if (wordText.startsWith('~')) {
    if (folded === '~') return true;
    if (folded.startsWith('~/')) {
      const rel = posix.normalize(folded.slice(2)).replace(/\/$/, '');
      if (rel === '.' || rel === '..' || rel.startsWith('../')) return true;
    }
  }
  const n = absolute(folded);
  if (n === '/' || n === '/*') return true;
  if (n === null) return false;
  return CRITICAL_ROOTS.some((root) => n === root || n.startsWith(`${root}/`) || n.startsWith(`${root}*`));
}

function scanDelete(c: Semantics, s: Signals): void {
  let ended = false;
  let critical = false;
  let unresolved = false;
  c.args.forEach((arg, i) => {
    if (arg === null) {
      unresolved = true;
      return;
    }
    if (arityUncertain(arg, c.words[i]!)) unresolved = true;
    if (!ended && arg === '--') {
      ended = true;
      return;
    }
    if (!ended && arg.startsWith('-') && arg !== '-') return;
    if (isCritical(arg, c.words[i]!.text)) critical = true;
  });
  const flags = hasRecursiveForce(c);
  const isRm = c.basename?.toLowerCase() === 'rm';
  if (!critical) {
    if (unresolved && flags && (isRm || c.uncertain)) s.uncertain = true;
    return;
  }
  if (isRm && flags) s.delete = true;
  else if (c.uncertain && (flags || unresolved)) s.uncertain = true;
  else if (isRm && unresolved) s.uncertain = true;
}

/** `input`: what the program reads on standard input, when it is a script a pipe feeds (`… | sh -c 'sh'`). */
async function scanProgram(program: ShellProgram, depth: number, s: Signals, input?: Source): Promise<void> {
  const cmds: [ShellCommand, Semantics][] = [];
  for (const command of commands(program)) {
    const resolved = resolve(command);
    const effective = unwrap(resolved);
    if (resolved.basename !== null && resolved.basename in WRAPPERS && effective.uncertain) s.uncertain = true;
    cmds.push([command, effective]);
  }
  if (unmodeledCompoundSource(program, cmds)) s.uncertain = true;
  await scanFetchPipelines(program, cmds, depth, s);
  if (input) await scanInheritedInput(program, cmds, input, depth, s);
  for (const [command, c] of cmds) {
    scanRawDisk(c, s);
    scanDelete(c, s);
    const [has, script, unsure] = executedSource(c, command);
    if (unsure) s.uncertain = true;
    if (!has) continue;
    // The one command of a fed script passes its input on to the script it runs.
    let nestedInput: Source | undefined;
    if (input && cmds.length === 1) {
      const candidate = stdinSource(command, input, program.root);
      if (candidate[0]) nestedInput = candidate;
    }
    await scanNested(script, depth, s, nestedInput);
  }
}

async function scanNested(source: string | null, depth: number, s: Signals, input?: Source): Promise<void> {
  if (source === null || depth >= MAX_DEPTH) {
    s.uncertain = true;
    return;
  }
  const nested = await parseShell(source);
  if (!nested) {
    s.uncertain = true;
    return;
  }
  await scanProgram(nested, depth + 1, s, input);
}

async function segmentVerdict(segment: string): Promise<RailVerdict> {
  const program = await parseShell(segment);
  if (!program) return { risk: 'UNKNOWN' };
  const s: Signals = { fetch: false, rawDisk: false, delete: false, uncertain: false };
  await scanProgram(program, 0, s);
  if (s.fetch) return { risk: 'HIGH', rule: 'fetch-to-exec' };
  if (s.rawDisk) return { risk: 'HIGH', rule: 'raw-disk-op' };
  if (s.delete) return { risk: 'HIGH', rule: 'catastrophic-delete' };
  return { risk: s.uncertain ? 'UNKNOWN' : 'LOW' };
}

/** The first segment with a rail wins; otherwise the first unresolved one; otherwise LOW. */
export async function railRisk(action: ActionEvent): Promise<RailVerdict> {
  let unknown: RailVerdict | undefined;
  for (const segment of execSegments(action)) {
    const v = await segmentVerdict(segment);
    if (v.risk === 'HIGH') return v;
    if (v.risk === 'UNKNOWN') unknown ??= v;
  }
  return unknown ?? { risk: 'LOW' };
}

