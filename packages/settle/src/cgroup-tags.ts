import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { namePrefix } from './cgroup.js';

// Finding the cgroups settle made for a tag (teardownByTag after a crash): by name, since a
// cgroup's name is `settle-[<ownerTag>-]<tag>`.

/** Which cgroups a tag query means: those named for one of `tags`, or for a tag starting with one of `prefixes`. */
export interface CgroupQuery {
  tags: readonly string[];
  prefixes: readonly string[];
}

// The cgroups settle made under each parent whose name carries a tag the query names.
export function cgroupsTagged(query: CgroupQuery, parents: readonly string[]): string[] {
  const found: string[] = [];
  for (const parent of new Set(parents)) {
    let names: string[];
    try {
      names = readdirSync(parent);
    } catch {
      continue;
    }
    for (const name of names) {
      if (!name.startsWith(namePrefix)) continue;
      const tags = name.slice(namePrefix.length).split('-');
      const named = tags.some((t) => query.tags.includes(t) || query.prefixes.some((p) => t.startsWith(p)));
      if (named) found.push(join(parent, name));
    }
  }
  return found;
}
