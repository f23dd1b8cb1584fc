// The browser tools (OpenHands names, arguments and BrowserObservation), on one BrowserSession per
// conversation; the recording tools are in recording.ts.
import type TurndownService from 'turndown';
import type { Page } from 'playwright-core';
import type { BrowserObservation } from '../../../api/events/index.ts';
import { optional, requireString, textContent, ToolArgumentError, type AgentTool } from '../tool.ts';
import { RECORDING_SPECS } from './recording.ts';
import { BrowserSession, BrowserUnavailable } from './session.ts';
import type { Act, BrowserKind, BrowserToolSpec } from './spec.ts';

/** Text handed to the model per call; longer page content continues with `start_from_char`. */
export const CONTENT_LIMIT = 30_000;
const NAVIGATION_TIMEOUT_MS = 30_000;
const ACTION_TIMEOUT_MS = 10_000;


function nonNegativeInt(args: Record<string, unknown>, name: string): number {
  const v = args[name];
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw new ToolArgumentError(`Parameter '${name}' is required and must be a non-negative integer`);
  return v;
}

function tabId(args: Record<string, unknown>): string {
  const id = requireString(args, 'tab_id');
  if (!/^[0-9a-zA-Z]{4}$/.test(id)) throw new ToolArgumentError("Parameter 'tab_id' must be the 4-character id browser_list_tabs shows");
  return id;
}

function checkUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ToolArgumentError(`'${url}' is not an absolute URL (include the scheme, e.g. https://)`);
  }
  if (!['http:', 'https:', 'file:', 'about:'].includes(parsed.protocol)) throw new ToolArgumentError(`URLs with ${parsed.protocol} cannot be opened; use http, https or file`);
  return url;
}

async function describe(session: BrowserSession, page: Page): Promise<string> {
  const elements = await session.interactiveElements(page);
  const lines = elements.map((e) => {
    const attrs = Object.entries(e.attributes).map(([k, v]) => ` ${k}="${v}"`).join('');
    return `[${e.index}]<${e.tag}${attrs}>${e.text}</${e.tag}>`;
  });
  const tabs = await session.tabs();
  return [
    `Current URL: ${page.url()}`,
    `Title: ${await page.title()}`,
    `Tab: ${session.tabId(page)} (${tabs.length} open)`,
    '',
    lines.length ? `Interactive elements:\n${lines.join('\n')}` : 'No interactive elements on the page.',
  ].join('\n');
}

async function element(session: BrowserSession, index: number): Promise<{ page: Page; handle: ReturnType<Page['locator']> }> {
  const page = await session.page();
  const handle = page.locator(`[data-ay-index="${index}"]`);
  if ((await handle.count()) === 0) throw new BrowserUnavailable(`No element with index ${index}; call browser_get_state for the current indexes`);
  return { page, handle };
}

// turndown (with its DOM, ≈ 50 modules) is loaded by the first browser_get_content, not at start-up.
let turndownService: Promise<TurndownService> | undefined;
function turndown(): Promise<TurndownService> {
  return (turndownService ??= import('turndown').then(({ default: Turndown }) => {
    const t = new Turndown({ headingStyle: 'atx', codeBlockStyle: 'fenced' });
    t.remove(['script', 'style', 'noscript']);
    return t;
  }));
}

const SPECS = [
  {
    name: 'browser_navigate',
    kind: 'BrowserNavigateAction',
    description: 'Navigate to a URL in the browser, optionally in a new tab. Returns the page state with its interactive elements.',
    properties: { url: { type: 'string', description: 'The URL to navigate to' }, new_tab: { type: 'boolean', description: 'Whether to open in a new tab. Default: False' } },
    required: ['url'],
    toAction: (a) => ({ kind: 'BrowserNavigateAction', url: checkUrl(requireString(a, 'url')), new_tab: optional<boolean>(a, 'new_tab', 'boolean') ?? false }),
    async run(action, session) {
      const page = action.new_tab ? await session.newPage() : await session.page();
      await page.goto(action.url, { waitUntil: 'domcontentloaded', timeout: NAVIGATION_TIMEOUT_MS });
      return describe(session, page);
    },
  } satisfies BrowserToolSpec<'BrowserNavigateAction'>,
  {
    name: 'browser_click',
    kind: 'BrowserClickAction',
    description: 'Click an element on the page by its index (from browser_get_state). new_tab opens a link in a new tab.',
    properties: { index: { type: 'integer', minimum: 0, description: 'The index of the element to click' }, new_tab: { type: 'boolean', description: 'Open the link in a new tab. Default: False' } },
    required: ['index'],
    toAction: (a) => ({ kind: 'BrowserClickAction', index: nonNegativeInt(a, 'index'), new_tab: optional<boolean>(a, 'new_tab', 'boolean') ?? false }),
    async run(action, session) {
      const { page, handle } = await element(session, action.index);
      if (action.new_tab) {
        const href = await handle.getAttribute('href');
        if (!href) throw new BrowserUnavailable(`Element ${action.index} is not a link; click it without new_tab`);
        const tab = await session.newPage();
        await tab.goto(new URL(href, page.url()).toString(), { waitUntil: 'domcontentloaded', timeout: NAVIGATION_TIMEOUT_MS });
        return describe(session, tab);
      }
      await handle.click({ timeout: ACTION_TIMEOUT_MS });
      await page.waitForLoadState('domcontentloaded', { timeout: NAVIGATION_TIMEOUT_MS }).catch(() => undefined);
      return describe(session, await session.page());
    },
  } satisfies BrowserToolSpec<'BrowserClickAction'>,
  {
    name: 'browser_type',
    kind: 'BrowserTypeAction',
    description: 'Type text into an input field identified by its index (from browser_get_state); replaces what the field held.',
    properties: { index: { type: 'integer', minimum: 0, description: 'The index of the input element' }, text: { type: 'string', description: 'The text to type' } },
    required: ['index', 'text'],
    toAction: (a) => ({ kind: 'BrowserTypeAction', index: nonNegativeInt(a, 'index'), text: requireString(a, 'text') }),
    async run(action, session) {
      const { page, handle } = await element(session, action.index);
      await handle.fill(action.text, { timeout: ACTION_TIMEOUT_MS });
      return `Typed into element ${action.index}.\n\n${await describe(session, page)}`;
    },
  } satisfies BrowserToolSpec<'BrowserTypeAction'>,
  {
    name: 'browser_get_state',
    kind: 'BrowserGetStateAction',
    description: 'Get the current state of the page: URL, title and every interactive element with the index to use in browser_click and browser_type. Optionally a screenshot.',
    properties: { include_screenshot: { type: 'boolean', description: 'Whether to include a screenshot. Default: False' } },
    readOnly: true,
    toAction: (a) => ({ kind: 'BrowserGetStateAction', include_screenshot: optional<boolean>(a, 'include_screenshot', 'boolean') ?? false }),
    async run(action, session) {
      const page = await session.page();
      const text = await describe(session, page);
      if (!action.include_screenshot) return text;
      return { text, screenshot: (await page.screenshot({ type: 'png' })).toString('base64') };
    },
  } satisfies BrowserToolSpec<'BrowserGetStateAction'>,
  {
    name: 'browser_get_content',
    kind: 'BrowserGetContentAction',
    description: `Extract the content of the current page as markdown (scripts and styles removed), at most ${CONTENT_LIMIT} characters per call; continue with start_from_char.`,
    properties: {
      extract_links: { type: 'boolean', description: 'Keep link targets in the markdown. Default: False' },
      start_from_char: { type: 'integer', minimum: 0, description: 'Where to continue a long page. Default: 0' },
    },
    readOnly: true,
    toAction: (a) => {
      const start = a['start_from_char'] == null ? 0 : nonNegativeInt(a, 'start_from_char');
      return { kind: 'BrowserGetContentAction', extract_links: optional<boolean>(a, 'extract_links', 'boolean') ?? false, start_from_char: start };
    },
    async run(action, session) {
      const page = await session.page();
      let markdown = (await turndown()).turndown(await page.content());
      if (!action.extract_links) markdown = markdown.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
      const start = action.start_from_char ?? 0;
      const part = markdown.slice(start, start + CONTENT_LIMIT);
      const rest = markdown.length - (start + part.length);
      return rest > 0 ? `${part}\n\n[${rest} more characters: call browser_get_content with start_from_char=${start + part.length}]` : part;
    },
  } satisfies BrowserToolSpec<'BrowserGetContentAction'>,
  {
    name: 'browser_scroll',
    kind: 'BrowserScrollAction',
    description: 'Scroll the page up or down by one screen.',
    properties: { direction: { type: 'string', enum: ['up', 'down'], description: "Direction to scroll. Default: 'down'" } },
    readOnly: true,
    toAction: (a) => {
      const direction = optional<string>(a, 'direction', 'string') ?? 'down';
      if (direction !== 'up' && direction !== 'down') throw new ToolArgumentError("Parameter 'direction' must be 'up' or 'down'");
      return { kind: 'BrowserScrollAction', direction };
    },
    async run(action, session) {
      const page = await session.page();
      await page.mouse.wheel(0, action.direction === 'up' ? -800 : 800);
      return describe(session, page);
    },
  } satisfies BrowserToolSpec<'BrowserScrollAction'>,
  {
    name: 'browser_go_back',
    kind: 'BrowserGoBackAction',
    description: 'Go back to the previous page in the browser history.',
    toAction: () => ({ kind: 'BrowserGoBackAction' }),
    async run(_action, session) {
      const page = await session.page();
      await page.goBack({ waitUntil: 'domcontentloaded', timeout: NAVIGATION_TIMEOUT_MS });
      return describe(session, page);
    },
  } satisfies BrowserToolSpec<'BrowserGoBackAction'>,
  {
    name: 'browser_list_tabs',
    kind: 'BrowserListTabsAction',
    description: 'List all open browser tabs with their ids, URLs and titles.',
    readOnly: true,
    toAction: () => ({ kind: 'BrowserListTabsAction' }),
    async run(_action, session) {
      const tabs = await session.tabs();
      return tabs.length ? tabs.map((t) => `${t.id}: ${t.title || '(untitled)'} ${t.url}`).join('\n') : 'No tabs are open.';
    },
  } satisfies BrowserToolSpec<'BrowserListTabsAction'>,
  {
    name: 'browser_switch_tab',
    kind: 'BrowserSwitchTabAction',
    description: 'Switch to a different browser tab by its 4-character id (from browser_list_tabs).',
    properties: { tab_id: { type: 'string', description: '4 character tab id' } },
    required: ['tab_id'],
    toAction: (a) => ({ kind: 'BrowserSwitchTabAction', tab_id: tabId(a) }),
    async run(action, session) {
      return describe(session, await session.switchTo(action.tab_id));
    },
  } satisfies BrowserToolSpec<'BrowserSwitchTabAction'>,
  {
    name: 'browser_close_tab',
    kind: 'BrowserCloseTabAction',
    description: 'Close a browser tab by its 4-character id (from browser_list_tabs).',
    properties: { tab_id: { type: 'string', description: '4 character tab id' } },
    required: ['tab_id'],
    toAction: (a) => ({ kind: 'BrowserCloseTabAction', tab_id: tabId(a) }),
    async run(action, session) {
      await session.closeTab(action.tab_id);
      return `Closed tab ${action.tab_id}.`;
    },
  } satisfies BrowserToolSpec<'BrowserCloseTabAction'>,
  {
    name: 'browser_get_storage',
    kind: 'BrowserGetStorageAction',
    description: 'Get the browser storage (cookies and local storage per origin) as JSON.',
    readOnly: true,
    toAction: () => ({ kind: 'BrowserGetStorageAction' }),
    async run(_action, session) {
      const page = await session.page();
      return JSON.stringify(await page.context().storageState(), null, 2);
    },
  } satisfies BrowserToolSpec<'BrowserGetStorageAction'>,
  {
    name: 'browser_set_storage',
    kind: 'BrowserSetStorageAction',
    description: 'Set browser cookies from a storage state ({cookies, origins}) as browser_get_storage returns it.',
    properties: { storage_state: { type: 'object', description: 'The storage state: {cookies: [...], origins: [...]}' } },
    required: ['storage_state'],
    toAction: (a) => {
      const state = a['storage_state'];
      if (!state || typeof state !== 'object' || Array.isArray(state)) throw new ToolArgumentError("Parameter 'storage_state' must be an object");
      return { kind: 'BrowserSetStorageAction', storage_state: state as Record<string, unknown> };
    },
    async run(action, session) {
      const cookies = action.storage_state['cookies'];
      if (cookies !== undefined && !Array.isArray(cookies)) throw new BrowserUnavailable('storage_state.cookies must be an array');
      const page = await session.page();
      if (Array.isArray(cookies) && cookies.length) await page.context().addCookies(cookies as Parameters<ReturnType<Page['context']>['addCookies']>[0]);
      return `Set ${Array.isArray(cookies) ? cookies.length : 0} cookies.`;
    },
  } satisfies BrowserToolSpec<'BrowserSetStorageAction'>,
  ...RECORDING_SPECS,
] as const;

function toTool(spec: BrowserToolSpec<BrowserKind>, session: () => BrowserSession): AgentTool {
  const definitionKind = spec.kind.replace(/Action$/, 'Tool');
  return {
    name: spec.name,
    definitionKind,
    actionKind: spec.kind,
    observationKind: 'BrowserObservation',
    description: spec.description,
    parameters: { type: 'object', properties: spec.properties ?? {}, ...(spec.required ? { required: spec.required } : {}) },
    toAction: spec.toAction,
    ...(spec.readOnly ? { readOnly: true } : {}),
    async execute(action, ctx): Promise<BrowserObservation> {
      try {
        const out = await spec.run(action as Act<BrowserKind>, session());
        const text = typeof out === 'string' ? out : out.text;
        const extra: { screenshot?: string; saveDir?: string } = typeof out === 'string' ? {} : out;
        return { kind: 'BrowserObservation', content: textContent(ctx.mask(text)), is_error: false, screenshot_data: extra.screenshot ?? null, full_output_save_dir: extra.saveDir ?? null };
      } catch (err) {
        // A page that fails (timeout, bad selector, no Chromium) is the model's to handle, not the run's end.
        const message = err instanceof Error ? err.message.split('\n')[0]! : String(err);
        return { kind: 'BrowserObservation', content: textContent(ctx.mask(message)), is_error: true, screenshot_data: null, full_output_save_dir: null };
      }
    },
  };
}

/** The names of the browser tools, for listings (no browser is started). */
export const BROWSER_TOOL_NAMES: readonly string[] = SPECS.map((s) => s.name);

/** Every browser tool over one lazily started session (the browser starts on the first call). */
export function browserTools(session: () => BrowserSession): AgentTool[] {
  return SPECS.map((spec) => toTool(spec as unknown as BrowserToolSpec<BrowserKind>, session));
}

/** OpenHands clients ask for the browser with the tool spec `BrowserToolSet`. */
export function wantsBrowser(tools: readonly { name: string }[] | undefined): boolean {
  return (tools ?? []).some((t) => /^browser/i.test(t.name) || t.name === 'browser_tool_set');
}
