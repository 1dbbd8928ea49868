/**
 * Jinja2's statements, as the base class of the Jinja2 parser (jinja-parser.ts): `{% with %}`,
 * `{% for ... if ... recursive %}`, `{% set a, b = ... %}` and `{% set ns.attr = ... %}`, chained
 * `{% filter a | b %}`, `{% raw %}` with whitespace control, and a clear error for nunjucks-only tags.
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

/** `{% with name = value, ... %}body{% endwith %}`. */
export const With: NodeClass = N.Node.extend("With", { fields: ["targets", "values", "body"] });

const NUNJUCKS_ONLY_TAGS = new Set(["verbatim", "ifAsync", "asyncEach", "asyncAll", "switch"]);
const ENDRAW_RE = /\{%[-+]?\s*endraw\s*(-?)[+]?%\}/;

/** `instanceof` without type narrowing (every node class produces the same AstNode type). */
function is(node: unknown, kind: NodeClass): boolean {
  return node instanceof kind;
}

export class StatementParser extends nj.parser.Parser {
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
      node = new N.Filter(
        name.lineno,
        name.colno,
        name,
        new N.NodeList(name.lineno, name.colno, [node, ...args]),
      );
    return new N.Output(tag.lineno, tag.colno, [node]);
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
