// How objects become rows: JSON, with a Secret's `data` sealed by the SecretBox. Both the objects
// table and the change log go through here, so no plaintext Secret value is ever written.
import type { KubeObject } from '../../api/meta.ts';
import { isSealed, type SecretBox } from './secret-box.ts';

function isSecret(obj: KubeObject): boolean {
  return obj.apiVersion === 'v1' && obj.kind === 'Secret';
}

function context(obj: KubeObject): string {
  return `${obj.metadata.namespace ?? ''}/${obj.metadata.name}`;
}

export class ObjectCodec {
  readonly #box: SecretBox;

  constructor(box: SecretBox) {
    this.#box = box;
  }

  encode(obj: KubeObject): string {
    if (!isSecret(obj)) return JSON.stringify(obj);
    const { data, ...rest } = obj as KubeObject & { data?: unknown };
    if (data === undefined) return JSON.stringify(rest);
    return JSON.stringify({ ...rest, data: this.#box.seal(JSON.stringify(data), context(obj)) });
  }

  decode<T extends KubeObject>(text: string): T {
    const obj = JSON.parse(text) as T & { data?: unknown };
    if (isSecret(obj) && isSealed(obj.data)) obj.data = JSON.parse(this.#box.open(obj.data, context(obj)));
    return obj;
  }
}
