// Canvas extensions, their backends and the browser bridge to them, as one unit the server loads on
// first use (routes/canvas-extensions.ts): a server nobody installs an extension on never loads it.
import { join } from 'node:path';
import { CanvasBackends } from './backends.ts';
import { AppBackendBridge, type BridgeOptions } from './bridge.ts';
import { CanvasExtensions } from './extensions.ts';

export class Canvas {
  readonly extensions: CanvasExtensions;
  readonly backends: CanvasBackends;
  readonly bridge: AppBackendBridge;

  constructor(stateDir: string, bridge: BridgeOptions) {
    this.extensions = new CanvasExtensions(join(stateDir, 'installed'));
    this.backends = new CanvasBackends(this.extensions, join(stateDir, 'backends'));
    this.bridge = new AppBackendBridge((name) => this.backends.readyPort(name), bridge);
  }

  /** Stop: a stopped (or disabled, or uninstalled) backend must not stay reachable through a live cookie. */
  async stopApp(name: string) {
    this.bridge.revokeApp(name);
    return this.backends.stop(name);
  }

  async close(): Promise<void> {
    this.bridge.close();
    await this.backends.shutdown();
  }
}
