import { err, type Result } from '@runplan/common';
import type { WorkdirError } from './errors.js';
import { canonicalTemplate, nameShape, parsePathTemplate, renderElements, type PathOptions } from './path-template.js';
import type { TemplateVars } from './render.js';
import { applyRetention, isRetainCount, type PruneReport } from './retention.js';

export interface PruneOptions extends PathOptions {
  /** How many of our run directories to keep (the newest by mark time). */
  retain: number;
  /** Run directories in flight: never removed, whatever their age. */
  inFlight?: string[];
  /** Judge and report, remove nothing. */
  dryRun?: boolean;
}

/**
 * Keeps the newest `retain` run directories of a template's holding directory and removes
 * the older ones that are provably ours (ADR-0051's rules; see applyRetention). Refused when
 * the varying element is not last or the template is shared: pruning would point at
 * directories the template does not own.
 */
export async function prune(template: string, vars: TemplateVars, opts: PruneOptions): Promise<Result<PruneReport, WorkdirError>> {
  if (!isRetainCount(opts.retain)) {
    return err({ reason: 'bad_retain', message: `retain must be a non-negative integer, got ${String(opts.retain)}` });
  }
  const parsed = parsePathTemplate(template, opts);
  if (!parsed.ok) return parsed;
  const path = parsed.value;
  if (path.shared) {
    return err({
      reason: 'shared_workdir',
      message: `${JSON.stringify(template)} names no run-varying variable: it is one shared workdir, with no run directories to prune`,
      hint: 'under a shared workdir, run data is bounded by keep_runs (workdir datadir WORKDIR --keep-runs N)',
    });
  }
  const last = path.elements[path.elements.length - 1]!;
  const holding = renderElements(path, vars, path.elements.length - 1);
  if (!holding.ok) return holding;
  const shape = nameShape(last, vars);
  if (!shape.ok) return shape;
  const expected = canonicalTemplate(template);
  return applyRetention({
    holding: holding.value,
    shape: shape.value,
    judgeMark: (mark) => ((mark.kind ?? 'run') === 'run' && canonicalTemplate(mark.template) === expected ? undefined : 'other_template'),
    retain: opts.retain,
    inFlight: opts.inFlight ?? [],
    dryRun: opts.dryRun ?? false,
  });
}
