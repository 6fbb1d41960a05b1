// Git's ref-name rules (git-check-ref-format(1)) for what runplan puts into refs: the slug
// becomes `runplan/<slug>`, `land` names a branch. Returns why git would refuse, or undefined.
export function refComponentProblem(component: string): string | undefined {
  if (component === '') return 'is empty';
  if (component.startsWith('.')) return 'starts with "."';
  if (component.startsWith('-')) return 'starts with "-"';
  if (component.endsWith('.lock')) return 'ends with ".lock"';
  if (component.endsWith('.')) return 'ends with "."';
  if (component.includes('..')) return 'contains ".."';
  if (component.includes('@{')) return 'contains "@{"';
  if (component === '@') return 'is "@"';
  // eslint-disable-next-line no-control-regex
  const bad = /[\x00-\x20\x7f~^:?*[\\]/.exec(component);
  if (bad) return `contains ${JSON.stringify(bad[0])}`;
  return undefined;
}

// A branch name (may hold `/`-separated components).
export function branchNameProblem(name: string): string | undefined {
  if (name.startsWith('-')) return 'starts with "-"';
  if (name.startsWith('refs/')) return 'is a full ref; give the branch name';
  const parts = name.split('/');
  for (const part of parts) {
    const problem = refComponentProblem(part);
    if (problem) return parts.length > 1 ? `has a component that ${problem}` : problem;
  }
  return undefined;
}

// A revision given to git as an argument: never an option, never whitespace or control chars.
export function revisionProblem(rev: string): string | undefined {
  if (rev === '') return 'is empty';
  if (rev.startsWith('-')) return 'starts with "-" (git would read it as an option)';
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x20\x7f]/.test(rev)) return 'contains whitespace or a control character';
  return undefined;
}
