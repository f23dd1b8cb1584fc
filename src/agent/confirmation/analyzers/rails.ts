// PolicyRailSecurityAnalyzer (OpenHands 1.58 `defense_in_depth/policy_rails.py`): rules over shell
// structure, each executable segment on its own so text from two fields never forms one match.
// Rails: fetch-to-exec (curl/wget output piped into a later command), raw-disk-op (mkfs, dd of=/dev/…),
// catastrophic-delete (rm -rf of /, ~, /etc, /usr, /var, /home, /boot). A rail → HIGH; shell
// structure that matters but cannot be resolved → UNKNOWN; otherwise LOW (no rail, not "safe").
// Wrappers (sudo, env, timeout, nice, …) are looked through with 1.58's option tables.
// Where this reads less than 1.58 is written in shell.ts.
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
  type Semantics,
  type ShellCommand,
  type ShellProgram,
} from './shell.ts';

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
  const [, c] = direct;
  if (c.basename !== 'echo' && c.basename !== 'printf') return null;
  const idx = c.words.findIndex((w) => w.node.startIndex <= nested.startIndex && nested.endIndex <= w.node.endIndex);
  if (idx < 0) return false;
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

/** A stage's static output piped into a runner that reads it as its script (`echo 'rm -rf /' | sh`): scanned as shell. */
async function scanPipedSources(stages: Node[], groups: [ShellCommand, Semantics][][], depth: number, s: Signals): Promise<void> {
  for (let i = 0; i < groups.length - 1; i++) {
    const producers = directIn(stages[i]!, groups[i]!);
    const consumers = directIn(stages[i + 1]!, groups[i + 1]!);
    if (!consumers.length) continue;
    if (producers.length !== 1) {
      if (consumers.some(([, c]) => couldBeRunner(c))) s.uncertain = true;
      continue;
    }
    const output = pipelineOutput(...producers[0]!);
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
    const [has, source, unsure] = pipedSource(command, c, output);
    if (unsure) s.uncertain = true;
    // Decision (narrower than 1.58): a runner with its own -c script and piped input is not followed further.
    if (has) await scanNested(source, depth, s);
  }
}

async function scanFetchPipelines(program: ShellProgram, cmds: [ShellCommand, Semantics][], depth: number, s: Signals): Promise<void> {
  for (const pipeline of pipelines(program)) {
    const stages = pipeline.node.namedChildren.filter((n): n is Node => n !== null);
    const groups = stages.map((stage) => cmds.filter(([c]) => c.node.startIndex >= stage.startIndex && c.node.endIndex <= stage.endIndex));
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

async function scanProgram(program: ShellProgram, depth: number, s: Signals): Promise<void> {
  const cmds: [ShellCommand, Semantics][] = [];
  for (const command of commands(program)) {
    const resolved = resolve(command);
    const effective = unwrap(resolved);
    if (resolved.basename !== null && resolved.basename in WRAPPERS && effective.uncertain) s.uncertain = true;
    cmds.push([command, effective]);
  }
  await scanFetchPipelines(program, cmds, depth, s);
  for (const [command, c] of cmds) {
    scanRawDisk(c, s);
    scanDelete(c, s);
    const [has, script, unsure] = executedSource(c, command);
    if (unsure) s.uncertain = true;
    if (!has) continue;
    await scanNested(script, depth, s);
  }
}

async function scanNested(source: string | null, depth: number, s: Signals): Promise<void> {
  if (source === null || depth >= MAX_DEPTH) {
    s.uncertain = true;
    return;
  }
  const nested = await parseShell(source);
  if (!nested) {
    s.uncertain = true;
    return;
  }
  await scanProgram(nested, depth + 1, s);
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

