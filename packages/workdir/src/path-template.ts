import { homedir } from 'node:os';
import { err, ok, type Result } from '@runplan/common';
import { fromTemplateError, type WorkdirError } from './errors.js';
import { renderChecked, type TemplateVars } from './render.js';
import { checkTemplate, parseTemplate, type Template } from './template.js';
import { variableSpec } from './variables.js';

/**
 * A workdir template seen as path elements. Only the LAST element may vary between runs;
 * earlier ones may name only `harness.name` / `plan.slug`, so the parent of the varying
 * element (the holding directory) is the same for every run and pruning can be derived
 * from the template without pointing at directories that predate us.
 */
export interface PathTemplate {
  /** The template as given (before `~` expansion); this is what a mark records. */
  text: string;
  /** Non-empty path elements after `~` expansion, each checked for the workdir tier. */
  elements: Template[];
  /** No element varies: one directory shared by every run. */
  shared: boolean;
}

export interface PathOptions {
  /** What `~` at the start expands to; default os.homedir(). */
  home?: string;
}

// Parses and checks a workdir template: tier, absoluteness, varying element last.
export function parsePathTemplate(text: string, opts: PathOptions = {}): Result<PathTemplate, WorkdirError> {
  const raw = text.split('/');
  const elements: Template[] = [];
  let start = 0;
  if (raw[0] === '~') {
    // Home is a literal path, never parsed as a template.
    const home = opts.home ?? homedir();
    for (const piece of home.split('/'))
      if (piece !== '') elements.push({ text: piece, parts: [{ kind: 'literal', text: piece }], variables: [] });
    if (!home.startsWith('/')) {
      return err({ reason: 'not_absolute', message: `home directory ${JSON.stringify(home)} is not absolute` });
    }
    start = 1;
  } else if (raw[0] !== '') {
    return err({
      reason: 'not_absolute',
      element: raw[0],
      message: `workdir template ${JSON.stringify(text)} is not an absolute path (start it with / or ~/)`,
    });
  }
  for (const piece of raw.slice(start)) {
    if (piece === '') continue;
    const checked = checkTemplate(piece, 'workdir');
    if (!checked.ok) return err(fromTemplateError(checked.error, piece));
    elements.push(checked.value);
  }
  const varying = elements.map(isVarying);
  const last = elements.length - 1;
  const early = varying.findIndex((v, i) => v && i !== last);
  if (early >= 0) {
    const element = elements[early]!;
    const names = element.variables.filter((name) => variableSpec(name)?.varying ?? true);
    return err({
      reason: 'varying_not_last',
      element: element.text,
      variable: names[0],
      message: `element ${JSON.stringify(element.text)} names ${names.map((n) => `{{${n}}}`).join(', ')}, which varies per run, but is not the last path element`,
      hint: 'only the last element may name run.*, task.* or dates; earlier ones only harness.name and plan.slug',
    });
  }
  return ok({ text, elements, shared: last < 0 || !varying[last] });
}

// Whether an element names anything that differs between runs.
export function isVarying(element: Template): boolean {
  return element.variables.some((name) => variableSpec(name)?.varying ?? true);
}

// Renders elements [0, end) into an absolute path.
export function renderElements(template: PathTemplate, vars: TemplateVars, end = template.elements.length): Result<string, WorkdirError> {
  let path = '';
  for (const element of template.elements.slice(0, end)) {
    const rendered = renderChecked(element, vars);
    if (!rendered.ok) return err(fromTemplateError(rendered.error, element.text));
    path += `/${rendered.value}`;
  }
  return ok(path === '' ? '/' : path);
}

/**
 * The path a workdir template names for these values (`~` expanded), without creating
 * anything: what a journal records before createRunDir runs.
 */
export function renderPath(text: string, vars: TemplateVars, opts: PathOptions = {}): Result<string, WorkdirError> {
  const parsed = parsePathTemplate(text, opts);
  return parsed.ok ? renderElements(parsed.value, vars) : parsed;
}

/**
 * The directory HOLDING the run directories: what a template means with no run in flight.
 * For a shared workdir it is the workdir itself.
 */
export function holdingDirectory(text: string, vars: TemplateVars, opts: PathOptions = {}): Result<string, WorkdirError> {
  const parsed = parsePathTemplate(text, opts);
  if (!parsed.ok) return parsed;
  const template = parsed.value;
  return renderElements(template, vars, template.shared ? template.elements.length : template.elements.length - 1);
}

/**
 * The names the last element could have rendered to: literals exactly, constants as their
 * value, each varying variable as its value class. A name outside this shape is not ours,
 * whatever mark it holds.
 */
export function nameShape(element: Template, vars: TemplateVars): Result<RegExp, WorkdirError> {
  let source = '';
  for (const part of element.parts) {
    if (part.kind === 'literal') {
      source += escapeRegex(part.text);
      continue;
    }
    const spec = variableSpec(part.name);
    if (!spec)
      return err({
        reason: 'unknown_variable',
        variable: part.name,
        element: element.text,
        message: `{{${part.name}}} is not a template variable`,
      });
    if (spec.varying) {
      source += `(?:${spec.pattern})`;
      continue;
    }
    const constant = renderChecked({ text: element.text, parts: [part], variables: [part.name] }, vars);
    if (!constant.ok) return err(fromTemplateError(constant.error, element.text));
    source += escapeRegex(constant.value);
  }
  return ok(new RegExp(`^${source}$`));
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

// The template with whitespace inside braces dropped, so `{{ run.id }}` and `{{run.id}}` are one template.
export function canonicalTemplate(text: string): string {
  const parsed = parseTemplate(text);
  if (!parsed.ok) return text;
  return parsed.value.parts.map((part) => (part.kind === 'literal' ? part.text : `{{${part.name}}}`)).join('');
}
