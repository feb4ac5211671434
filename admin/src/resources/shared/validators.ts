/**
 * react-admin validators built from the forms' pure checks. A check reads the whole form (the
 * values as the inputs hold them) and answers the i18n key of its message or null; `fromCheck`
 * makes it an input's validator, so the message shows under that input. Unit-tested in
 * validators.test.ts.
 */
import type { Validator } from 'react-admin';

/** A form check: the i18n key of the problem, or null. */
export type FormCheck<F> = (form: F) => string | null;

/**
 * An input validator from a check on the whole form (`read` turns react-hook-form's values into
 * the form type the check takes). `required` marks the input as required (its label's asterisk).
 */
export function fromCheck<F>(check: FormCheck<F>, read: (values: Record<string, unknown>) => F, opts: { required?: boolean } = {}): Validator {
  const v: Validator & { isRequired?: boolean } = (_value, values) => check(read((values ?? {}) as Record<string, unknown>)) ?? undefined;
  if (opts.required) v.isRequired = true;
  return v;
}

/** Required text: empty or blank (only spaces) answers `message`. */
export function requiredText(message: string): Validator {
  const v: Validator & { isRequired?: boolean } = (value) => (String(value ?? '').trim() ? undefined : message);
  v.isRequired = true;
  return v;
}

/** A JSON object, or nothing: anything else (a list, a number, bad JSON) answers `message`. */
export function jsonObject(message: string): Validator {
  return (value) => {
    const text = String(value ?? '').trim();
    if (!text) return undefined;
    try {
      const v = JSON.parse(text) as unknown;
      return v && typeof v === 'object' && !Array.isArray(v) ? undefined : message;
    } catch {
      return message;
    }
  };
}
