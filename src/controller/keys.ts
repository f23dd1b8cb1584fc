// Object keys in the work queue are `namespace/name`, as in client-go.
export function objectKey(namespace: string | undefined, name: string): string {
  return `${namespace ?? 'default'}/${name}`;
}

export function splitKey(key: string): { namespace: string; name: string } {
  const slash = key.indexOf('/');
  return slash < 0 ? { namespace: 'default', name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}
