/**
 * The FILTERS and TESTS maps templates can use: Jinja2's builtin filters (filters.ts) and tests
 * (tests.ts). A filter name unknown here fails when the template is compiled, unless it sits in an
 * `{% if %}` branch or an inline if, where it fails only when that code runs (as in Jinja2).
 */

import type { FilterFn, Lookup, TestFn } from "../python/args.js";
import { checkDefined } from "../python/undefined.js";
import { builtinFilters, TOLERANT_FILTERS } from "./filters.js";
import { builtinTests } from "./tests.js";

const filters = new Map<string, FilterFn>();
const tests = new Map<string, TestFn>();
const lookup: Lookup = { filter: (name) => filters.get(name), test: (name) => tests.get(name) };

/** Wraps a filter so that an undefined value or argument raises (StrictUndefined). */
function strict(fn: FilterFn): FilterFn {
  return (value, ...args) => {
    checkDefined(value);
    for (const a of args) checkDefined(a);
    return fn(value, ...args);
  };
}

for (const [name, fn] of builtinFilters(lookup))
  filters.set(name, TOLERANT_FILTERS.has(name) ? fn : strict(fn));
for (const [name, fn] of builtinTests(lookup)) tests.set(name, fn);

export const FILTERS: ReadonlyMap<string, FilterFn> = filters;
export const TESTS: ReadonlyMap<string, TestFn> = tests;
