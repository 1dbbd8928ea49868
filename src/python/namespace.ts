/**
 * Jinja2's `namespace(...)` object: its attributes can be changed with `{% set ns.name = value %}`, also
 * from inside a loop or block (where a plain `{% set %}` stays local).
 */

import { PyError } from "./errors.js";
import { pyRepr } from "./values.js";

export class Namespace {
  /** The class name Jinja2 error messages use. */
  static readonly pyQualName = "jinja2.utils.Namespace";

  constructor(readonly attrs: Record<string, unknown>) {}

  __repr__(): string {
    return `<Namespace ${pyRepr(this.attrs)}>`;
  }
}

/** `{% set target.name = value %}`: only a namespace's attributes can be assigned. */
export function setNamespaceAttr(target: unknown, name: string, value: unknown): void {
  if (!(target instanceof Namespace))
    throw new PyError("TemplateRuntimeError", "cannot assign attribute on non-namespace object");
  target.attrs[name] = value;
}
