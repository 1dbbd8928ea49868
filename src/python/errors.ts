/** A Python-level exception (TypeError, ValueError, ...) raised while evaluating a template expression. */
export class PyError extends Error {
  constructor(
    readonly pyType: string,
    message: string,
  ) {
    super(message);
    this.name = pyType;
  }
}

export function typeError(message: string): PyError {
  return new PyError("TypeError", message);
}

export function valueError(message: string): PyError {
  return new PyError("ValueError", message);
}
