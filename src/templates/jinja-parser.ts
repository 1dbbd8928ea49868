/**
 * The Jinja2 parser: a nunjucks Parser subclass that reads Jinja2 expressions where nunjucks differs:
 * `True`/`False`/`None` literals, Python slices `x[a:b:c]`, tuples, trailing commas, Jinja2's operator
 * precedence (`~` binds tighter than `+`, `%` as tight as `*`, tests bind like filters), `x is test arg`
 * and Python number literals. Statements (`with`, `for`, `set`, `filter`, `raw`) are read by its base
 * class in jinja-statements.ts. The overrides live on these private subclasses; nunjucks itself is not
 * patched.
 */

import { StatementParser } from "./jinja-statements.js";
import { type AstNode, type NodeClass, type NodeList, nj, T, type Token } from "./nunjucks-internals.js";

const N = nj.nodes;

/** `target[start:stop:step]`; missing bounds are null. */
export const PySlice: NodeClass = N.Node.extend("PySlice", { fields: ["target", "start", "stop", "step"] });
/** `bool(target)`, wrapped around `if` conditions. */
export const PyTruthy: NodeClass = N.Node.extend("PyTruthy", { fields: ["target"] });

const NAMED_LITERALS = new Map<string, unknown>([
  ["True", true],
  ["False", false],
  ["None", null],
]);
const NOT_TEST_ARGS = new Set(["else", "or", "and", "if"]);

/** A number literal's value: ints beyond 2**53 become bigints so that they stay exact. */
function numberLiteral(text: string, isFloat: boolean): number | bigint {
  const n = Number(text);
  return isFloat || Number.isSafeInteger(n) ? n : BigInt(text);
}

export class JinjaParser extends StatementParser {
  override parsePrimary(noPostfix?: boolean): AstNode {
    const tok = this.peekToken();
    let node: AstNode | null = null;
    if (tok?.type === T.SYMBOL && NAMED_LITERALS.has(tok.value)) {
      node = new N.Literal(tok.lineno, tok.colno, NAMED_LITERALS.get(tok.value));
    } else if (tok?.type === T.NONE && tok.value === "null") {
      node = new N.Symbol(tok.lineno, tok.colno, "null");
    } else if (
      tok?.type === T.FLOAT ||
      (tok?.type === T.SYMBOL && /^\d[\d_]*(?:[eE]\d*)?$/.test(tok.value))
    ) {
      this.nextToken();
      const text = this.readNumber(tok);
      const isFloat = /[.eE]/.test(text);
      node = new N.Literal(tok.lineno, tok.colno, numberLiteral(text.replaceAll("_", ""), isFloat));
      node.isFloat = isFloat;
      return noPostfix ? node : this.parsePostfix(node);
    } else if (tok?.type === T.INT) {
      node = new N.Literal(tok.lineno, tok.colno, numberLiteral(tok.value, false));
    }
    if (node === null) return super.parsePrimary(noPostfix);
    this.nextToken();
    return noPostfix ? node : this.parsePostfix(node);
  }

  /**
   * nunjucks lexes `1.5e-3` as `1.5`, `e`, `-`, `3`, `1e3` as a name and `1_000.5` as `1_000`, `.`,
   * `5`: glue the adjacent pieces of a Python number literal back together.
   */
  private readNumber(first: Token): string {
    let text = first.value;
    const adjacent = (t: Token | null): t is Token =>
      t !== null && t.lineno === first.lineno && t.colno === first.colno + text.length;
    const take = (t: Token): void => {
      this.nextToken();
      text += t.value;
    };
    const bad = (): never => this.fail(`invalid number literal '${text}'`, first.lineno, first.colno);
    let next = this.peekToken();
    if (
      first.type === T.SYMBOL &&
      /^[\d_]+$/.test(text) &&
      adjacent(next) &&
      next.type === T.OPERATOR &&
      next.value === "."
    ) {
      take(next);
      next = this.peekToken();
      if (
        adjacent(next) &&
        (next.type === T.INT || (next.type === T.SYMBOL && /^[\d_]+(?:[eE]\d*)?$/.test(next.value)))
      )
        take(next);
    } else if (
      first.type === T.FLOAT &&
      adjacent(next) &&
      next.type === T.SYMBOL &&
      /^[eE]\d*$/.test(next.value)
    ) {
      take(next);
    }
    if (/[eE]$/.test(text)) {
      next = this.peekToken();
      if (adjacent(next) && next.type === T.OPERATOR && (next.value === "-" || next.value === "+"))
        take(next);
      next = this.peekToken();
      if (!adjacent(next) || next.type !== T.INT) bad();
      take(next);
    }
    if (!/^\d+(?:_\d+)*(?:\.(?:\d+(?:_\d+)*)?)?(?:[eE][+-]?\d+(?:_\d+)*)?$/.test(text)) bad();
    return text;
  }

  override parsePostfix(start: AstNode): AstNode {
    let node = start;
    for (let tok = this.peekToken(); tok; tok = this.peekToken()) {
      if (tok.type === T.LEFT_PAREN) {
        node = new N.FunCall(tok.lineno, tok.colno, node, this.parseSignature());
      } else if (tok.type === T.LEFT_BRACKET) {
        node = this.parseSubscript(node, tok);
      } else if (tok.type === T.OPERATOR && tok.value === ".") {
        this.nextToken();
        const name = this.nextToken();
        if (name?.type === T.INT) {
          node = new N.LookupVal(
            tok.lineno,
            tok.colno,
            node,
            new N.Literal(name.lineno, name.colno, Number(name.value)),
          );
        } else if (name && (name.type === T.SYMBOL || name.type === T.NONE || name.type === T.BOOLEAN)) {
          node = new N.LookupVal(
            tok.lineno,
            tok.colno,
            node,
            new N.Literal(name.lineno, name.colno, name.value),
          );
          node.dot = true;
        } else {
          this.fail(
            `expected name as lookup value, got ${name?.value ?? "end of file"}`,
            name?.lineno,
            name?.colno,
          );
        }
      } else {
        break;
      }
    }
    return node;
  }

  /** Jinja2's `parse_subscript`: an index or a slice with optional bounds. */
  private parseSubscript(target: AstNode, open: Token): AstNode {
    this.nextToken();
    const isClose = (t: Token | null): boolean => t?.type === T.RIGHT_BRACKET;
    const isColon = (t: Token | null): boolean => t?.type === T.COLON;
    let start: AstNode | null = null;
    if (!isColon(this.peekToken())) {
      start = this.parseExpression();
      if (!isColon(this.peekToken())) {
        if (!isClose(this.nextToken()))
          this.fail("expected ']' (tuple subscripts are not supported)", open.lineno, open.colno);
        return new N.LookupVal(open.lineno, open.colno, target, start);
      }
    }
    this.nextToken();
    let stop: AstNode | null = null;
    let step: AstNode | null = null;
    if (!isColon(this.peekToken()) && !isClose(this.peekToken())) stop = this.parseExpression();
    if (isColon(this.peekToken())) {
      this.nextToken();
      if (!isClose(this.peekToken())) step = this.parseExpression();
    }
    if (!isClose(this.nextToken())) this.fail("expected ']' after slice", open.lineno, open.colno);
    return new PySlice(open.lineno, open.colno, target, start, stop, step);
  }

  /** nunjucks parses `is` above comparisons; Jinja2 parses it with the filters (see parseUnary). */
  override parseIs(): AstNode {
    return this.parseCompare();
  }

  /** Jinja2's `parse_unary` + `parse_filter_expr`: filters and tests bind to the unary expression. */
  override parseUnary(noFilters?: boolean): AstNode {
    let node = super.parseUnary(noFilters);
    if (noFilters) return node;
    for (let tok = this.peekToken(); tok; tok = this.peekToken()) {
      if (tok.type === T.SYMBOL && tok.value === "is") node = this.parseTest(node);
      else if (tok.type === T.PIPE) node = this.parseFilter(node);
      else break;
    }
    return node;
  }

  /** `x is [not] name`, `x is name(args)` or `x is name arg`, as Jinja2's `parse_test`. */
  private parseTest(subject: AstNode): AstNode {
    const isTok = this.peekToken();
    this.skipSymbol("is");
    const negated = this.skipSymbol("not");
    const nameTok = this.nextToken();
    if (!nameTok || (nameTok.type !== T.SYMBOL && nameTok.type !== T.NONE && nameTok.type !== T.BOOLEAN)) {
      this.fail("expected a test name after 'is'", isTok.lineno, isTok.colno);
    }
    const next = this.peekToken();
    let args: AstNode[] = [];
    if (next?.type === T.LEFT_PAREN) {
      args = this.parseSignature().children;
    } else if (
      next &&
      ([T.STRING, T.INT, T.FLOAT, T.LEFT_BRACKET, T.LEFT_CURLY, T.NONE, T.BOOLEAN].includes(next.type) ||
        (next.type === T.SYMBOL && !NOT_TEST_ARGS.has(next.value)))
    ) {
      args = [this.parsePostfix(this.parsePrimary(true))];
    }
    const test = new N.FunCall(
      nameTok.lineno,
      nameTok.colno,
      new N.Symbol(nameTok.lineno, nameTok.colno, nameTok.value),
      new N.NodeList(nameTok.lineno, nameTok.colno, args),
    );
    const node = new N.Is(subject.lineno, subject.colno, subject, test);
    return negated ? new N.Not(node.lineno, node.colno, node) : node;
  }

  /** Jinja2's `parse_math1`: `+` and `-` over `~` expressions (nunjucks calls this from parseCompare). */
  override parseConcat(): AstNode {
    let node = this.parseTilde();
    for (
      let tok = this.peekToken();
      tok?.type === T.OPERATOR && (tok.value === "+" || tok.value === "-");
      tok = this.peekToken()
    ) {
      this.nextToken();
      const Op = tok.value === "+" ? N.Add : N.Sub;
      node = new Op(node.lineno, node.colno, node, this.parseTilde());
    }
    return node;
  }

  private parseTilde(): AstNode {
    let node = this.parseMath2();
    while (this.skipValue(T.TILDE, "~"))
      node = new N.Concat(node.lineno, node.colno, node, this.parseMath2());
    return node;
  }

  /** Jinja2's `parse_math2`: `*`, `/`, `//` and `%`, left-associative, over `**` expressions. */
  private parseMath2(): AstNode {
    const ops: Record<string, NodeClass | undefined> = {
      "*": N.Mul,
      "/": N.Div,
      "//": N.FloorDiv,
      "%": N.Mod,
    };
    let node = this.parsePow();
    for (let tok = this.peekToken(); tok?.type === T.OPERATOR && ops[tok.value]; tok = this.peekToken()) {
      this.nextToken();
      const Op = ops[tok.value] as NodeClass;
      node = new Op(node.lineno, node.colno, node, this.parsePow());
    }
    return node;
  }

  /** Lists, dicts and parenthesised expressions or tuples, accepting trailing commas. */
  override parseAggregate(): AstNode | null {
    const tok = this.nextToken();
    const kinds: Record<string, [NodeClass | undefined, string]> = {
      [T.LEFT_PAREN]: [N.Group, T.RIGHT_PAREN],
      [T.LEFT_BRACKET]: [N.Array, T.RIGHT_BRACKET],
      [T.LEFT_CURLY]: [N.Dict, T.RIGHT_CURLY],
    };
    const kind = tok ? kinds[tok.type] : undefined;
    if (!tok || !kind?.[0]) return null;
    const [Kind, close] = kind;
    const node = new Kind(tok.lineno, tok.colno) as NodeList;
    let sawComma = false;
    for (;;) {
      if (this.skip(close)) break;
      if (node.children.length > 0) {
        if (!this.skip(T.COMMA)) this.fail("expected ',' or a closing bracket", tok.lineno, tok.colno);
        sawComma = true;
        if (this.skip(close)) break;
      }
      if (Kind === N.Dict) {
        const key = this.parsePrimary();
        if (!this.skip(T.COLON)) this.fail("expected ':' after dict key", tok.lineno, tok.colno);
        node.addChild(new N.Pair(key.lineno, key.colno, key, this.parseExpression()));
      } else {
        node.addChild(this.parseExpression());
      }
    }
    if (Kind === N.Group && (sawComma || node.children.length === 0)) node.isTuple = true;
    return node;
  }
}
