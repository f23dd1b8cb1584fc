// Paging shared by the Git providers: OpenHands' opaque page ids, pages cut from a host's numbered
// pages without losing or repeating an item, and the `owner/repo` a request names.
import { Invalid } from '../../api/errors.ts';
import type { GitPage, RepositoryName } from './provider.ts';

/** OpenHands' opaque page ids: the page (or offset) number in unpadded URL-safe base64. */
export function encodePageId(n: number): string {
  return Buffer.from(String(n)).toString('base64url');
}

/**
 * The page number of a page id (1 without one). OpenHands reads a page id it cannot decode as the
 * first page; here it is a 422 naming query.page_id, as every other cursor of this API.
 */
export function decodePageId(pageId: string | undefined): number {
  if (!pageId) return 1;
  const text = Buffer.from(pageId, 'base64url').toString('utf8');
  if (!/^[1-9][0-9]{0,8}$/.test(text) || encodePageId(Number(text)) !== pageId.replace(/=+$/, '')) {
    throw new Invalid([{ loc: ['query', 'page_id'], msg: 'Not a page id this API gave out (next_page_id of the previous page)', type: 'value_error' }]);
  }
  return Number(text);
}

/** Items of a page and the id of the next: `limit + 1` items read tell whether there is one. */
export function pageOf<T>(rows: T[], page: number, limit: number): GitPage<T> {
  return { items: rows.slice(0, limit), next_page_id: rows.length > limit ? encodePageId(page + 1) : null };
}

/** Page `page` of a whole list (OpenHands' paginate_results and its suggested-task paging). */
export function slicePage<T>(all: T[], page: number, limit: number): GitPage<T> {
  return pageOf(all.slice((page - 1) * limit, page * limit + 1), page, limit);
}

/** One page as a host served it: its items and its Link header (OpenHands' Repository.link_header). */
export interface HostPage {
  items: any[];
  link: string | null;
}

/**
 * Items [offset, offset + count) of a list the host serves in numbered pages, read in pages of
 * `size` (at most the host's cap, so each page it serves is whole). Each item comes with the Link
 * header of the host's page it was on.
 */
export async function window(read: (page: number, size: number) => Promise<HostPage>, offset: number, count: number, size: number): Promise<{ item: any; link: string | null }[]> {
  const out: { item: any; link: string | null }[] = [];
  let page = Math.floor(offset / size) + 1;
  let skip = offset % size;
  for (;;) {
    const got = await read(page, size);
    out.push(...got.items.slice(skip).map((item) => ({ item, link: got.link })));
    skip = 0;
    // A page shorter than asked is the last; more than asked would be a host that ignores `limit`.
    if (out.length >= count || got.items.length < size || got.items.length > size) return out.slice(0, count);
    page++;
  }
}

/** A URL path segment as its name (`My%20Project` → `My Project`); a malformed escape is kept as written. */
function decodeSegment(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * `owner/repo` of a repository name or URL, as OpenHands' _split_repo reads it, and every segment
 * as `path` for hosts that nest deeper (GitLab subgroups; Azure DevOps `organization/project/repo`,
 * whose project names may hold spaces). From a URL, `path` stops at GitLab's `/-/` and skips Azure
 * DevOps' `_git`.
 */
export function splitRepository(repository: string): RepositoryName {
  let path = repository.trim();
  const isUrl = /^https?:\/\//.test(path);
  if (isUrl) path = URL.parse(path)?.pathname ?? '';
  const parts = path.split('/').filter(Boolean);
  let segments = parts;
  if (isUrl) {
    const dash = segments.indexOf('-');
    segments = (dash >= 0 ? segments.slice(0, dash) : segments).filter((s) => s !== '_git').map(decodeSegment);
  }
  const nested = segments.length > 2 && segments.every((p) => /^[A-Za-z0-9_.-]+( [A-Za-z0-9_.-]+)*$/.test(p));
  if (parts.length < 2 || (!nested && !parts.slice(0, 2).every((p) => /^[A-Za-z0-9_.-]+$/.test(p)))) {
    throw new Invalid([{ loc: ['query', 'repository'], msg: 'Expected a repository as owner/repo', type: 'value_error' }]);
  }
  const repo = parts[1]!.replace(/\.git$/, '');
  return { owner: parts[0]!, repo, path: nested ? segments.join('/').replace(/\.git$/, '') : `${parts[0]}/${repo}` };
}
