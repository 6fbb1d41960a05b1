import { err, ok, type Result } from '@runplan/common';
import { isUntrusted, knownVariables, tierRefusal, variableSpec, type Tier } from './variables.js';

/**
 * The template language: literal text and `{{name}}` references (dotted names, whitespace
 * inside the braces allowed). No filters, no logic, no escapes. A lone `{` or `}}` is text.
 */
export type TemplatePart =
  | { kind: 'literal'; text: string }
  | { kind: 'variable'; name: string /** Offset of the opening `{{` in the text. */; offset: number };

export interface Template {
  text: string;
  parts: TemplatePart[];
  /** Names referenced, each once, in order of first use. */
  variables: string[];
}

export type TemplateErrorReason =
  | 'unknown_variable'
  | 'not_allowed_in_tier'
  | 'untrusted_variable'
  | 'bad_identifier'
  | 'unterminated'
  | 'missing_value'
  | 'empty_reference';

/** Why a template (or one argv element of it) cannot be used; names the element and variable. */
export interface TemplateError {
  reason: TemplateErrorReason;
  /** Index of the argv element (renderArgv); absent for a single text. */
  element?: number;
  variable?: string;
  /** The text of the template (element) that failed. */
  text: string;
  message: string;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$/;

// Splits a template into literal text and references; refuses unterminated and empty braces.
export function parseTemplate(text: string): Result<Template, TemplateError> {
  const parts: TemplatePart[] = [];
  const variables: string[] = [];
  let literal = '';
  let at = 0;
  while (at < text.length) {
    const open = text.indexOf('{{', at);
    if (open < 0) {
      literal += text.slice(at);
      break;
    }
    literal += text.slice(at, open);
    const close = text.indexOf('}}', open + 2);
    if (close < 0) {
      return err({
        reason: 'unterminated',
        text,
        message: `"{{" at offset ${open} has no closing "}}"`,
      });
    }
    const name = text.slice(open + 2, close).trim();
    if (name === '') {
      return err({ reason: 'empty_reference', text, message: `"${text.slice(open, close + 2)}" at offset ${open} names no variable` });
    }
    if (!NAME.test(name)) {
      return err({
        reason: 'unknown_variable',
        variable: name,
        text,
        message: `"${text.slice(open, close + 2)}" at offset ${open} is not a variable name`,
      });
    }
    if (literal !== '') parts.push({ kind: 'literal', text: literal });
    literal = '';
    parts.push({ kind: 'variable', name, offset: open });
    if (!variables.includes(name)) variables.push(name);
    at = close + 2;
  }
  if (literal !== '') parts.push({ kind: 'literal', text: literal });
  return ok({ text, parts, variables });
}

// The variable names a template references; with a syntax error, every well-formed reference in it.
export function templateVariables(text: string): string[] {
  const parsed = parseTemplate(text);
  if (parsed.ok) return parsed.value.variables;
  const names: string[] = [];
  for (const match of text.matchAll(/\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}/g)) {
    if (match[1] !== undefined && !names.includes(match[1])) names.push(match[1]);
  }
  return names;
}

/**
 * Parses and checks that every reference is known, trusted and allowed in the tier, without
 * values: what plan validation runs before anything exists to render.
 */
export function checkTemplate(text: string, tier: Tier): Result<Template, TemplateError> {
  const parsed = parseTemplate(text);
  if (!parsed.ok) return parsed;
  for (const part of parsed.value.parts) {
    if (part.kind !== 'variable') continue;
    const refusal = checkReference(part.name, tier, text);
    if (refusal) return err(refusal);
  }
  return parsed;
}

function checkReference(name: string, tier: Tier, text: string): TemplateError | undefined {
  if (isUntrusted(name)) {
    return {
      reason: 'untrusted_variable',
      variable: name,
      text,
      message: `{{${name}}} is untrusted outside text and is refused in every tier; pass {{event.file}} and read the payload from it`,
    };
  }
  const spec = variableSpec(name);
  if (!spec) {
    return {
      reason: 'unknown_variable',
      variable: name,
      text,
      message: `{{${name}}} is not a template variable (known: ${knownVariables().join(', ')})`,
    };
  }
  if (!spec.tiers.includes(tier)) {
    return { reason: 'not_allowed_in_tier', variable: name, text, message: tierRefusal(spec, tier) };
  }
  return undefined;
}
