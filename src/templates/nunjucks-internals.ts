/**
 * Typed access to the nunjucks internals swerun extends (lexer, parser, compiler, AST nodes, runtime).
 * `@types/nunjucks` only covers the public API; these shapes follow nunjucks 3.2's sources.
 */

import nunjucks from "nunjucks";

export interface Token {
  type: string;
  value: string;
  lineno: number;
  colno: number;
}

export interface Tokenizer {
  lineno: number;
  colno: number;
  index: number;
  in_code: boolean;
  tags: { BLOCK_START: string; BLOCK_END: string; VARIABLE_START: string; COMMENT_START: string };
  nextToken(): Token | null;
  currentStr(): string;
  forwardN(n: number): void;
  current(): string;
  forward(): void;
  isFinished(): boolean;
  _parseString(delimiter: string): string;
}

/** An AST node; fields depend on the node type (see nunjucks/src/nodes.js). */
export interface AstNode {
  readonly typename: string;
  lineno: number;
  colno: number;
  [field: string]: unknown;
}

export interface NodeList extends AstNode {
  children: AstNode[];
  addChild(node: AstNode): void;
}

export type NodeClass = new (lineno: number, colno: number, ...fields: unknown[]) => AstNode;

export interface ParserBase {
  tokens: Tokenizer;
  peeked: Token | null;
  dropLeadingWhitespace: boolean;
  breakOnBlocks: string[] | null;
  nextToken(withWhitespace?: boolean): Token | null;
  peekToken(): Token;
  pushToken(tok: Token | null): void;
  fail(msg: string, lineno?: number, colno?: number): never;
  skip(type: string): boolean;
  skipValue(type: string, value: string): boolean;
  skipSymbol(value: string): boolean;
  expect(type: string): Token;
  advanceAfterBlockEnd(name?: string): Token;
  parseExpression(): AstNode;
  parsePrimary(noPostfix?: boolean): AstNode;
  parsePostfix(node: AstNode): AstNode;
  parseUnary(noFilters?: boolean): AstNode;
  parseFilter(node: AstNode): AstNode;
  parsePow(): AstNode;
  parseConcat(): AstNode;
  parseIs(): AstNode;
  parseCompare(): AstNode;
  parseAggregate(): AstNode | null;
  parseSignature(tolerant?: boolean, noParens?: boolean): NodeList;
  parseStatement(): AstNode | null;
  parseRaw(tagName?: string): AstNode;
  parseOr(): AstNode;
  parseUntilBlocks(...names: string[]): NodeList;
  parseFilterName(): AstNode;
  parseFilterArgs(node: AstNode): AstNode[];
  parseAsRoot(): NodeList;
}

export interface CompilerBase {
  codebuf: string[];
  _emit(code: string): void;
  _emitLine(code: string): void;
  _tmpid(): string;
  _withScopedSyntax(fn: () => void): void;
  _compileExpression(node: AstNode, frame: CompileFrame): void;
  _compileAggregate(node: AstNode, frame: CompileFrame, startChar?: string, endChar?: string): void;
  assertType(node: AstNode, ...types: NodeClass[]): void;
  fail(msg: string, lineno?: number, colno?: number): never;
  compile(node: AstNode, frame?: CompileFrame): void;
  compileIf(node: AstNode, frame: CompileFrame, async?: boolean): void;
  compileInlineIf(node: AstNode, frame: CompileFrame): void;
  compileLiteral(node: AstNode, frame?: CompileFrame): void;
  compileFilter(node: AstNode, frame: CompileFrame): void;
  compileOutput(node: AstNode, frame: CompileFrame): void;
  compileSymbol(node: AstNode, frame: CompileFrame): void;
  compileSet(node: AstNode, frame: CompileFrame): void;
  compileMacro(node: AstNode, frame: CompileFrame): void;
  compileCaller(node: AstNode, frame: CompileFrame): void;
  compileCapture(node: AstNode, frame: CompileFrame): void;
  buffer: string;
  getCode(): string;
}

export interface CompileFrame {
  set(name: string, value: string): void;
  lookup(name: string): string | undefined;
  push(isolateWrites?: boolean): CompileFrame;
  pop(): CompileFrame;
}

export interface RuntimeFrame {
  topLevel: boolean;
  set(name: string, value: unknown, resolveUp?: boolean): void;
  lookup(name: string): unknown;
}

const NODE_NAMES = [
  "NodeList",
  "Literal",
  "Symbol",
  "Group",
  "Array",
  "Pair",
  "Dict",
  "LookupVal",
  "InlineIf",
  "FunCall",
  "Output",
  "TemplateData",
  "Is",
  "Not",
  "Add",
  "Concat",
  "Sub",
  "Mul",
  "Div",
  "FloorDiv",
  "Mod",
  "For",
  "Set",
  "Capture",
  "Filter",
] as const;

interface Internals {
  lexer: Record<string, string> & { lex(src: string, opts: object): Tokenizer };
  parser: { Parser: new (tokens: Tokenizer) => ParserBase };
  compiler: { Compiler: new (templateName: string, throwOnUndefined: boolean) => CompilerBase };
  nodes: Record<(typeof NODE_NAMES)[number], NodeClass> & {
    Node: NodeClass & { extend(name: string, props: { fields: string[] }): NodeClass };
  };
  runtime: Record<string, unknown> & { Frame: new () => RuntimeFrame; SafeString: new (s: string) => string };
  lib: { TemplateError: new (message: string, lineno?: number, colno?: number) => Error };
}

export const nj = nunjucks as unknown as Internals & typeof nunjucks;

/** Token type names (TOKEN_STRING, TOKEN_SYMBOL, ...). */
export const T = {
  STRING: nj.lexer.TOKEN_STRING as string,
  INT: nj.lexer.TOKEN_INT as string,
  FLOAT: nj.lexer.TOKEN_FLOAT as string,
  BOOLEAN: nj.lexer.TOKEN_BOOLEAN as string,
  NONE: nj.lexer.TOKEN_NONE as string,
  SYMBOL: nj.lexer.TOKEN_SYMBOL as string,
  OPERATOR: nj.lexer.TOKEN_OPERATOR as string,
  TILDE: nj.lexer.TOKEN_TILDE as string,
  COLON: nj.lexer.TOKEN_COLON as string,
  COMMA: nj.lexer.TOKEN_COMMA as string,
  LEFT_PAREN: nj.lexer.TOKEN_LEFT_PAREN as string,
  RIGHT_PAREN: nj.lexer.TOKEN_RIGHT_PAREN as string,
  LEFT_BRACKET: nj.lexer.TOKEN_LEFT_BRACKET as string,
  RIGHT_BRACKET: nj.lexer.TOKEN_RIGHT_BRACKET as string,
  LEFT_CURLY: nj.lexer.TOKEN_LEFT_CURLY as string,
  RIGHT_CURLY: nj.lexer.TOKEN_RIGHT_CURLY as string,
  BLOCK_END: nj.lexer.TOKEN_BLOCK_END as string,
  VARIABLE_END: nj.lexer.TOKEN_VARIABLE_END as string,
  PIPE: nj.lexer.TOKEN_PIPE as string,
} as const;
