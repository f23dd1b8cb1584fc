// PatternSecurityAnalyzer (OpenHands 1.58 `defense_in_depth/pattern.py`): signatures over the
// normalized text of an action. Shell signatures scan only what the action will execute; injection
// signatures scan everything. The default tables keep 1.58's regexes, descriptions and detector ids
// verbatim: they are the rule data a client configures against (settings carry the same triples),
// and the same rule must give the same risk on both servers.
import type { PatternSecurityAnalyzer } from '../../../api/agent-server/index.ts';
import type { ActionEvent, SecurityRisk } from '../../../api/events/index.ts';
import { allContent, execContent, execSegments, normalize } from './extract.ts';
import { scanRecursiveDelete } from './shell.ts';

export type PatternRow = [regex: string, description: string, detector: string];

export const DET_EXEC_DESTRUCT_RM_RF = 'exec.destruct.rm_rf';

export const DEFAULT_HIGH_PATTERNS: PatternRow[] = [
  [String.raw`\brm\s+(?:-[frR]{2,}|-[rR]\s+-f|-f\s+-[rR]|--recursive\s+--force|--force\s+--recursive)\b`, 'Recursive force-delete (rm -rf variants)', DET_EXEC_DESTRUCT_RM_RF],
  [String.raw`\bsudo\s+rm\b`, 'Privileged file deletion', 'exec.destruct.sudo_rm'],
  [String.raw`\bmkfs\.\w+`, 'Filesystem format command', 'exec.destruct.mkfs'],
  [String.raw`\bdd\b.{0,100}of=/dev/`, 'Raw disk write', 'exec.destruct.dd_raw_disk'],
  [String.raw`\beval\s*\(`, 'Dynamic code evaluation', 'exec.code.eval_call'],
  [String.raw`\bexec\s*\(`, 'Dynamic code execution', 'exec.code.exec_call'],
  [String.raw`\bos\.system\s*\(`, 'OS-level command execution', 'exec.code.os_system'],
  [String.raw`\bsubprocess\.(?:call|run|Popen|check_output|check_call)\s*\(`, 'Subprocess invocation', 'exec.code.subprocess'],
  [String.raw`\bcurl\b[^|]{0,200}\|\s*(?:ba)?sh\b`, 'Download and run (curl | sh)', 'exec.net.curl_pipe_exec'],
  [String.raw`\bwget\b[^|]{0,200}\|\s*(?:ba)?sh\b`, 'Download and run (wget | sh)', 'exec.net.wget_pipe_exec'],
];

export const DEFAULT_MEDIUM_PATTERNS: PatternRow[] = [
  [String.raw`\bcurl\b.{0,100}https?://`, 'HTTP request via curl', 'exec.net.curl'],
  [String.raw`\bwget\b.{0,100}https?://`, 'Download via wget', 'exec.net.wget'],
];

export const DEFAULT_INJECTION_HIGH_PATTERNS: PatternRow[] = [
  [
    String.raw`\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+)?(?:previous|prior|above)\s+(?:instructions?|prompts?|rules?|directives?)\b`,
    'Instruction override attempt',
    'inject.override',
  ],
];

export const DEFAULT_INJECTION_MEDIUM_PATTERNS: PatternRow[] = [
  [String.raw`\byou\s+are\s+now\s+(?:in\s+)?(?:\w+\s+)?mode\b`, 'Mode switching attempt', 'inject.mode_switch'],
  [String.raw`\bpretend\s+(?:you\s+are|to\s+be)\s+(?:a\s+)?different\b`, 'Identity manipulation', 'inject.identity'],
];

/**
 * A signature as a JS RegExp, case-insensitive like 1.58's re.IGNORECASE. The default tables use
 * only syntax both engines read alike; a configured one in Python-only syntax (`(?P<n>…)`, inline
 * flags) fails here, and a failing analyzer counts as HIGH, as 1.58 counts an analyzer error.
 */
const compiled = new Map<string, RegExp>();
function regex(source: string): RegExp {
  let r = compiled.get(source);
  if (!r) {
    r = new RegExp(source, 'i');
    compiled.set(source, r);
  }
  return r;
}

const hit = (rows: readonly PatternRow[], text: string): string | undefined => rows.find(([re]) => regex(re).test(text))?.[2];

export interface PatternVerdict {
  risk: SecurityRisk;
  detector?: string;
}

/** 1.58's order: HIGH exec, HIGH injection, shell-AST delete, MEDIUM exec, MEDIUM injection, then UNKNOWN when the AST was unsure. */
export async function patternRisk(settings: PatternSecurityAnalyzer, action: ActionEvent): Promise<PatternVerdict> {
  const exec = normalize(execContent(action));
  const all = normalize(allContent(action));
  if (!exec && !all) return { risk: 'LOW' };
  let d = hit(settings.high_patterns ?? DEFAULT_HIGH_PATTERNS, exec);
  if (d) return { risk: 'HIGH', detector: d };
  d = hit(settings.injection_high_patterns ?? DEFAULT_INJECTION_HIGH_PATTERNS, all);
  if (d) return { risk: 'HIGH', detector: d };
  let unsure = false;
  // The AST reads the original segments: normalizing first could change how the shell would parse them.
  for (const segment of execSegments(action)) {
    const s = await scanRecursiveDelete(segment);
    if (s.matched) return { risk: 'HIGH', detector: DET_EXEC_DESTRUCT_RM_RF };
    unsure ||= s.uncertain;
  }
  d = hit(settings.medium_patterns ?? DEFAULT_MEDIUM_PATTERNS, exec);
  if (d) return { risk: 'MEDIUM', detector: d };
  d = hit(settings.injection_medium_patterns ?? DEFAULT_INJECTION_MEDIUM_PATTERNS, all);
  if (d) return { risk: 'MEDIUM', detector: d };
  return { risk: unsure ? 'UNKNOWN' : 'LOW' };
}
