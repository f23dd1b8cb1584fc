// One headless Chromium per conversation (playwright-core, the system's Chromium), started on the
// first browser call and closed with the agent. Interactive elements get numeric indexes the model
// uses in click/type, as OpenHands' browser tools do; tabs get 4-character ids. A recording is a
// Playwright trace of the browser context, saved as a zip in `recordingsDir`.
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// playwright-core (≈ 75 MiB, ≈ 340 ms to load) is imported when a browser first starts, not when
// the agent server starts (issue #16).
import type { BrowserContext, Page } from 'playwright-core';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

/** The Chromium to drive: AGENTYARD_CHROMIUM, else the first system install found. */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const configured = env['AGENTYARD_CHROMIUM'];
  if (configured) return existsSync(configured) ? configured : undefined;
  return CANDIDATES.find((p) => existsSync(p));
}

/** The browser cannot be used here; the tool reports it as an error observation. */
export class BrowserUnavailable extends Error {}

/** Recording asked in the wrong state (stop without start, start twice); an error observation. */
export class RecordingStateError extends Error {}

export interface BrowserSessionOptions {
  /** Where recordings are saved (created on the first one). Default: a directory under the system temp dir. */
  recordingsDir?: string;
}

export interface SavedRecording {
  path: string;
  dir: string;
  bytes: number;
}

const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

export interface InteractiveElement {
  index: number;
  tag: string;
  text: string;
  attributes: Record<string, string>;
}

export interface Tab {
  id: string;
  url: string;
  title: string;
}

// Runs in the page: numbers the visible interactive elements (data-ay-index) and describes them.
// A script text rather than a function: this project compiles without the DOM typings.
const INDEX_INTERACTIVE_ELEMENTS = `(() => {
  const selector = 'a[href], button, input:not([type=hidden]), select, textarea, summary, [role=button], [role=link], [role=checkbox], [role=tab], [role=menuitem], [onclick], [contenteditable=""], [contenteditable=true]';
  const keep = ['type', 'name', 'placeholder', 'href', 'value', 'aria-label', 'title', 'role', 'id'];
  document.querySelectorAll('[data-ay-index]').forEach((el) => el.removeAttribute('data-ay-index'));
  const out = [];
  for (const el of document.querySelectorAll(selector)) {
    const r = el.getBoundingClientRect();
    const style = getComputedStyle(el);
    if (r.width === 0 || r.height === 0 || style.visibility === 'hidden' || style.display === 'none') continue;
    const index = out.length;
    el.setAttribute('data-ay-index', String(index));
    const attributes = {};
    for (const name of keep) {
      const v = name === 'value' && 'value' in el ? String(el.value) : el.getAttribute(name);
      if (v) attributes[name] = v.slice(0, 100);
    }
    out.push({ index, tag: el.tagName.toLowerCase(), text: (el.innerText || '').replace(/\\s+/g, ' ').trim().slice(0, 100), attributes });
  }
  return out;
})()`;

export class BrowserSession {
  readonly #executable: string | null;
  #context: BrowserContext | undefined;
  #profileDir: string | undefined;
  #starting: Promise<BrowserContext> | undefined;
  readonly #ids = new WeakMap<Page, string>();
  #current: Page | undefined;
  readonly #recordingsDir: string;
  /** The context a recording runs in, while one does. */
  #recording: BrowserContext | undefined;

  /** `null`: no browser here (the tools then answer that they are not available). */
  constructor(executable: string | null = findChromium() ?? null, opts: BrowserSessionOptions = {}) {
    this.#executable = executable;
    this.#recordingsDir = opts.recordingsDir ?? join(tmpdir(), 'agentyard-browser-recordings');
  }

  async #browser(): Promise<BrowserContext> {
    if (this.#context) return this.#context;
    const executable = this.#executable;
    if (!executable) throw new BrowserUnavailable('Browser tools are not available: no Chromium found (install the chromium package or set AGENTYARD_CHROMIUM)');
    this.#starting ??= (async () => {
      this.#profileDir = mkdtempSync(join(tmpdir(), 'agentyard-browser-'));
      const { chromium } = await import('playwright-core');
      const ctx = await chromium.launchPersistentContext(this.#profileDir, { executablePath: executable, headless: true, args: CHROMIUM_ARGS, viewport: { width: 1280, height: 900 } });
      ctx.on('page', (p) => this.#track(p));
      for (const p of ctx.pages()) this.#track(p);
      this.#context = ctx;
      return ctx;
    })();
    return this.#starting;
  }

  #track(page: Page): void {
    if (this.#ids.has(page)) return;
    let id: string;
    do id = Math.random().toString(16).slice(2, 6).padEnd(4, '0');
    while (this.#context?.pages().some((p) => this.#ids.get(p) === id));
    this.#ids.set(page, id);
    page.on('close', () => {
      if (this.#current === page) this.#current = undefined;
    });
  }

  /** The page the tools act on: the last one switched to or opened. */
  async page(): Promise<Page> {
    const ctx = await this.#browser();
    if (this.#current && !this.#current.isClosed()) return this.#current;
    this.#current = ctx.pages().at(-1) ?? (await ctx.newPage());
    this.#track(this.#current);
    return this.#current;
  }

  async newPage(): Promise<Page> {
    const ctx = await this.#browser();
    this.#current = await ctx.newPage();
    this.#track(this.#current);
    return this.#current;
  }

  async tabs(): Promise<Tab[]> {
    const ctx = await this.#browser();
    return Promise.all(ctx.pages().map(async (p) => ({ id: this.#ids.get(p)!, url: p.url(), title: await p.title().catch(() => '') })));
  }

  async #byId(tabId: string): Promise<Page> {
    const ctx = await this.#browser();
    const page = ctx.pages().find((p) => this.#ids.get(p) === tabId);
    if (!page) throw new BrowserUnavailable(`No tab with id ${tabId}; browser_list_tabs lists the open tabs`);
    return page;
  }

  async switchTo(tabId: string): Promise<Page> {
    this.#current = await this.#byId(tabId);
    await this.#current.bringToFront();
    return this.#current;
  }

  async closeTab(tabId: string): Promise<void> {
    await (await this.#byId(tabId)).close();
  }

  tabId(page: Page): string {
    return this.#ids.get(page) ?? '????';
  }

  async interactiveElements(page: Page): Promise<InteractiveElement[]> {
    return (await page.evaluate(INDEX_INTERACTIVE_ELEMENTS)) as InteractiveElement[];
  }

  async startRecording(): Promise<void> {
    if (this.#recording) throw new RecordingStateError('A recording is already running; call browser_stop_recording to save it before starting another');
    const ctx = await this.#browser();
    await ctx.tracing.start({ screenshots: true, snapshots: true, title: 'agentyard browser recording' });
    this.#recording = ctx;
  }

  async stopRecording(): Promise<SavedRecording> {
    const ctx = this.#recording;
    if (!ctx) throw new RecordingStateError('No recording is running; call browser_start_recording first');
    this.#recording = undefined;
    return this.#save(ctx);
  }

  async #save(ctx: BrowserContext): Promise<SavedRecording> {
    const dir = this.#recordingsDir;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const path = join(dir, `browser-recording-${new Date().toISOString().replace(/[:.]/g, '-')}.zip`);
    await ctx.tracing.stop({ path });
    return { path, dir, bytes: statSync(path).size };
  }

  async close(): Promise<void> {
    // A recording still running is saved rather than lost with the browser.
    const recording = this.#recording;
    this.#recording = undefined;
    if (recording) await this.#save(recording).catch(() => undefined);
    const starting = this.#starting;
    this.#starting = undefined;
    this.#context = undefined;
    this.#current = undefined;
    if (starting) await (await starting.catch(() => undefined))?.close().catch(() => undefined);
    if (this.#profileDir) rmSync(this.#profileDir, { recursive: true, force: true });
    this.#profileDir = undefined;
  }
}
