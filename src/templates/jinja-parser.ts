/**
 * A nunjucks Parser subclass that reads Jinja2 syntax where nunjucks differs: `True`/`False`/`None`
 * literals, Python slices `x[a:b:c]`, tuples, trailing commas, Jinja2's operator precedence (`~` binds
 * tighter than `+`, `%` as tight as `*`, tests bind like filters), `x is test arg`, Python number
 * literals, and `{% raw %}` with whitespace control. The overrides live on this private subclass;
 * nunjucks itself is not patched.
 */

import { jinjaTokenizer } from "./jinja-lexer.js";
import {
  type AstNode,
  type NodeClass,
  type NodeList,
  nj,
  T,
  type Token,
  type Tokenizer,
} from "./nunjucks-internals.js";

const N = nj.nodes;

/** `target[start:stop:step]`; missing bounds are null. */
export const PySlice: NodeClass = N.Node.extend("PySlice", { fields: ["target", "start", "stop", "step"] });
/** `bool(target)`, wrapped around `if` conditions. */
export const PyTruthy: NodeClass = N.Node.extend("PyTruthy", { fields: ["target"] });
/** `{% with name = value, ... %}body{% endwith %}`. */
export const With: NodeClass = N.Node.extend("With", { fields: ["targets", "values", "body"] });

const NAMED_LITERALS = new Map<string, unknown>([
  ["True", true],
  ["False", false],
  ["None", null],
]);
const NOT_TEST_ARGS = new Set(["else", "or", "and", "if"]);
const NUNJUCKS_ONLY_TAGS = new Set(["verbatim", "ifAsync", "asyncEach", "asyncAll", "switch"]);
const ENDRAW_RE = /\{%[-+]?\s*endraw\s*(-?)[+]?%\}/;

/** A number literal's value: ints beyond 2**53 become bigints so that they stay exact. */
function numberLiteral(text: string, isFloat: boolean): number | bigint {
  const n = Number(text);
  return isFloat || Number.isSafeInteger(n) ? n : BigInt(text);
}

/** `instanceof` without type narrowing (every node class produces the same AstNode type). */
function is(node: unknown, kind: NodeClass): boolean {
  return node instanceof kind;
}

const BaseParser = nj.parser.Parser;

export class JinjaParser extends BaseParser {
  constructor(tokens: Tokenizer) {
    jinjaTokenizer(tokens);
    super(tokens);
  }

  override parseStatement(): AstNode | null {
    const tok = this.peekToken();
    if (tok?.type === T.SYMBOL && NUNJUCKS_ONLY_TAGS.has(tok.value)) {
      this.fail(`unknown tag '${tok.value}'`, tok.lineno, tok.colno);
    }
    if (tok?.type === T.SYMBOL && tok.value === "with") return this.parseWith();
    return super.parseStatement();
  }

  /** `{% with a = 1, b = x %}...{% endwith %}` (the assignments are optional). */
  private parseWith(): AstNode {
    const tag = this.nextToken() as Token;
    const targets: AstNode[] = [];
    const values: AstNode[] = [];
    while (this.peekToken()?.type !== T.BLOCK_END) {
      if (targets.length > 0 && !this.skip(T.COMMA)) this.fail("expected ',' in with", tag.lineno, tag.colno);
      const name = this.nextToken();
      if (name?.type !== T.SYMBOL) this.fail("expected a name in with", tag.lineno, tag.colno);
      if (!this.skipValue(T.OPERATOR, "=")) this.fail("expected '=' in with", tag.lineno, tag.colno);
      targets.push(new N.Symbol(name.lineno, name.colno, name.value));
      values.push(this.parseExpression());
    }
    this.advanceAfterBlockEnd("with");
    const body = this.parseUntilBlocks("endwith");
    this.advanceAfterBlockEnd();
    return new With(tag.lineno, tag.colno, targets, values, body);
  }

  /**
   * `{% for target in iterable [if cond] [recursive] %}...{% else %}...{% endfor %}`; the condition and
   * the recursive flag are kept on the node as `cond` and `recursive`.
   */
  parseFor(): AstNode {
    const tag = this.nextToken() as Token;
    const node = new N.For(tag.lineno, tag.colno);
    const first = this.parsePrimary(true);
    if (!is(first, N.Symbol)) this.fail("expected a variable name in for", tag.lineno, tag.colno);
    node.name = first;
    if (this.peekToken()?.type === T.COMMA) {
      const names = new N.Array(first.lineno, first.colno) as NodeList;
      names.addChild(first);
      while (this.skip(T.COMMA)) names.addChild(this.parsePrimary(true));
      node.name = names;
    }
    if (!this.skipSymbol("in")) this.fail("expected 'in' in for", tag.lineno, tag.colno);
    node.arr = this.parseTupleOf(() => this.parseOr());
    node.cond = this.skipSymbol("if") ? this.parseExpression() : null;
    node.recursive = this.skipSymbol("recursive");
    this.advanceAfterBlockEnd("for");
    node.body = this.parseUntilBlocks("endfor", "else");
    node.else_ = null;
    if (this.skipSymbol("else")) {
      this.advanceAfterBlockEnd("else");
      node.else_ = this.parseUntilBlocks("endfor");
    }
    this.advanceAfterBlockEnd();
    return node;
  }

  /** `{% set a = x %}`, `{% set a, b = x, y %}`, `{% set ns.attr = x %}` or `{% set a %}...{% endset %}`. */
  parseSet(): AstNode {
    const tag = this.nextToken() as Token;
    const node = new N.Set(tag.lineno, tag.colno, []);
    const targets = node.targets as AstNode[];
    do targets.push(this.parsePrimary());
    while (this.skip(T.COMMA));
    if (this.skipValue(T.OPERATOR, "=")) {
      node.value = this.parseTupleOf(() => this.parseExpression());
      this.advanceAfterBlockEnd("set");
    } else {
      if (!this.skip(T.BLOCK_END)) this.fail("expected '=' or the end of the set tag", tag.lineno, tag.colno);
      node.body = new N.Capture(tag.lineno, tag.colno, this.parseUntilBlocks("endset"));
      node.value = null;
      this.advanceAfterBlockEnd();
    }
    return node;
  }

  /** An expression, or a tuple when commas follow (`a, b` without parentheses). */
  private parseTupleOf(parseOne: () => AstNode): AstNode {
    const first = parseOne();
    if (this.peekToken()?.type !== T.COMMA) return first;
    const tuple = new N.Group(first.lineno, first.colno) as NodeList;
    tuple.addChild(first);
    while (this.skip(T.COMMA)) {
      const next = this.peekToken();
      if (!next || next.type === T.BLOCK_END) break;
      if (next.type === T.SYMBOL && (next.value === "if" || next.value === "recursive")) break;
      tuple.addChild(parseOne());
    }
    tuple.isTuple = true;
    return tuple;
  }

  /** `{% filter name(args) | other %}...{% endfilter %}`: the body goes through each filter in turn. */
  parseFilterStatement(): AstNode {
    const tag = this.nextToken() as Token;
    const chain: Array<[AstNode, AstNode[]]> = [];
    do {
      const name = this.parseFilterName();
      chain.push([name, this.parseFilterArgs(name)]);
    } while (this.skip(T.PIPE));
    this.advanceAfterBlockEnd(tag.value);
    let node: AstNode = new N.Capture(tag.lineno, tag.colno, this.parseUntilBlocks("endfilter"));
    this.advanceAfterBlockEnd();
    for (const [name, args] of chain)
      node = new N.Filter(name.lineno, name.colno, name, new N.NodeList(name.lineno, name.colno, [node, ...args]));
    return new N.Output(tag.lineno, tag.colno, [node]);
  }

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

  /** Jinja2's raw block: ends at the first `endraw`; `-` strips whitespace inside and after it. */
  override parseRaw(): AstNode {
    const begun = this.advanceAfterBlockEnd();
    const stripStart = this.dropLeadingWhitespace;
    this.dropLeadingWhitespace = false;
    const rest = this.tokens.currentStr();
    const m = ENDRAW_RE.exec(rest);
    if (!m) this.fail("missing end of raw directive", begun.lineno, begun.colno);
    let text = rest.slice(0, m.index);
    if (stripStart) text = text.replace(/^\s+/, "");
    if (m[0].startsWith("{%-")) text = text.replace(/\s+$/, "");
    this.tokens.forwardN(m.index + m[0].length);
    this.dropLeadingWhitespace = m[1] === "-";
    return new N.Output(begun.lineno, begun.colno, [new N.TemplateData(begun.lineno, begun.colno, text)]);
  }
}
