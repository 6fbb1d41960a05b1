import { err, ok, type Result } from '@runplan/common';
import { checkTemplate, type Template, type TemplateError } from './template.js';
import { checkValue, variableSpec, type Tier } from './variables.js';

/** Values by dotted name: `{'run.id': 'x', 'run.attempt': 2}`. Undefined means "not known". */
export type TemplateVars = Readonly<Record<string, string | number | undefined>>;

/**
 * Renders one text. Every referenced value is checked (present, and the shape of its class)
 * before any text is produced, so a refused value can never leak half a path or argument.
 */
export function render(text: string, vars: TemplateVars, tier: Tier): Result<string, TemplateError> {
  const checked = checkTemplate(text, tier);
  if (!checked.ok) return checked;
  return renderChecked(checked.value, vars);
}

// Renders each argv element on its own, so no value can become a second argument.
export function renderArgv(argv: readonly string[], vars: TemplateVars, tier: Tier): Result<string[], TemplateError> {
  const out: string[] = [];
  for (const [element, text] of argv.entries()) {
    const rendered = render(text, vars, tier);
    if (!rendered.ok) return err({ ...rendered.error, element });
    out.push(rendered.value);
  }
  return ok(out);
}

// Renders a template already checked for its tier.
export function renderChecked(template: Template, vars: TemplateVars): Result<string, TemplateError> {
  const values = new Map<string, string>();
  for (const name of template.variables) {
    const spec = variableSpec(name);
    // checkTemplate refused unknown names; a missing spec here is a caller bug.
    if (!spec)
      return err({ reason: 'unknown_variable', variable: name, text: template.text, message: `{{${name}}} is not a template variable` });
    const value = Object.hasOwn(vars, name) ? vars[name] : undefined;
    if (value === undefined) {
      return err({ reason: 'missing_value', variable: name, text: template.text, message: `{{${name}}} has no value` });
    }
    const checked = checkValue(spec, value);
    if (!checked.ok) return err({ reason: 'bad_identifier', variable: name, text: template.text, message: checked.message });
    values.set(name, checked.text);
  }
  let out = '';
  for (const part of template.parts) out += part.kind === 'literal' ? part.text : (values.get(part.name) ?? '');
  return ok(out);
}
