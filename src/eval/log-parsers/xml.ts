import { LogParserError } from "./parser-error.js";

/** An XML element: its tag, its attributes (values decoded) and its child elements (text is dropped). */
export interface XmlElement {
  tag: string;
  attributes: Map<string, string>;
  children: XmlElement[];
}

const ENTITIES: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" };
// biome-ignore lint/suspicious/noControlCharactersInRegex: the characters XML 1.0 forbids
const FORBIDDEN = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/;
const NAME = /[^\s/>=<"'!?&;]+/y;
const SPACE = /[ \t\r\n]*/y;
const BREAKS = /[\t\n\r]/;
const REFERENCE = /&(#[0-9]+|#x[0-9a-fA-F]+|[A-Za-z_][\w.-]*);/g;

const fail = (what: string, at: number) => {
  throw new LogParserError(`malformed XML in the test log: ${what} at offset ${at}`);
};

/** Entity and character references replaced; an unknown entity or a stray `&` is malformed. */
function decode(text: string, at: number): string {
  if (!text.includes("&")) return text;
  const decoded = text.replace(REFERENCE, (_, ref: string) => {
    if (!ref.startsWith("#")) return ENTITIES[ref] ?? fail(`undefined entity &${ref};`, at);
    const code = ref.startsWith("#x") ? Number.parseInt(ref.slice(2), 16) : Number.parseInt(ref.slice(1), 10);
    const char = code <= 0x10ffff ? String.fromCodePoint(code) : "";
    if (char === "" || FORBIDDEN.test(char) || (code >= 0xd800 && code <= 0xdfff))
      fail("bad character reference", at);
    return char;
  });
  if (text.replace(REFERENCE, "").includes("&")) fail("stray &", at);
  return decoded;
}

/**
 * A small, strict parser of one XML document (elements, attributes, comments, CDATA, processing
 * instructions), enough to read a test runner's XML report as Python's ElementTree does: attribute values
 * normalised and decoded, malformed input thrown as a LogParserError.
 */
export function parseXml(xml: string): XmlElement {
  if (FORBIDDEN.test(xml)) fail("invalid character", xml.search(FORBIDDEN));
  return new XmlReader(xml).document();
}

/** Reads a document left to right; `#i` is where it is, `#stack` the elements open there. */
class XmlReader {
  readonly #xml: string;
  readonly #stack: XmlElement[] = [];
  #root: XmlElement | undefined;
  #i = 0;

  constructor(xml: string) {
    this.#xml = xml;
  }

  /** The root element, once every markup and text between them has been read. */
  document(): XmlElement {
    const xml = this.#xml;
    while (this.#i < xml.length) {
      const lt = xml.indexOf("<", this.#i);
      this.#text(xml.slice(this.#i, lt === -1 ? xml.length : lt));
      if (lt === -1) break;
      this.#i = lt;
      if (xml.startsWith("<!--", lt)) this.#comment();
      else if (xml.startsWith("<![CDATA[", lt)) this.#cdata();
      else if (xml.startsWith("<?", lt)) this.#skipTo("?>", 2, "unclosed processing instruction");
      else if (xml.startsWith("<!", lt)) fail("unsupported declaration", lt);
      else if (xml.startsWith("</", lt)) this.#endTag();
      else this.#startTag();
    }
    if (!this.#root) return fail("no element found", 0);
    if (this.#stack.length > 0) fail(`unclosed <${this.#stack.at(-1)?.tag}>`, xml.length);
    return this.#root;
  }

  /** Text between markup: checked (only blanks outside the root, references well formed), then dropped. */
  #text(text: string): void {
    if (text === "") return;
    if (this.#stack.length === 0 && text.trim() !== "") fail("text outside the root element", this.#i);
    decode(text, this.#i);
    if (text.includes("]]>")) fail("]]> in text", this.#i);
  }

  #comment(): void {
    const close = this.#xml.indexOf("-->", this.#i + 4);
    if (close === -1 || this.#xml.slice(this.#i + 4, close).includes("--")) fail("bad comment", this.#i);
    this.#i = close + 3;
  }

  #cdata(): void {
    if (this.#stack.length === 0) fail("CDATA outside the root element", this.#i);
    this.#skipTo("]]>", 0, "unclosed CDATA");
  }

  /** Moves past the next `end` from `skip` characters on; `what` is malformed when there is none. */
  #skipTo(end: string, skip: number, what: string): void {
    const close = this.#xml.indexOf(end, this.#i + skip);
    if (close === -1) fail(what, this.#i);
    this.#i = close + end.length;
  }

  #endTag(): void {
    this.#i += 2;
    const tag = this.#name();
    this.#skipSpace();
    if (this.#xml[this.#i] !== ">") fail("bad end tag", this.#i);
    this.#i += 1;
    const open = this.#stack.pop();
    if (!open || open.tag !== tag) fail(`mismatched </${tag}>`, this.#i);
  }

  /** A start tag and its attributes; the element stays open unless the tag closes itself (`/>`). */
  #startTag(): void {
    this.#i += 1;
    const element: XmlElement = { tag: this.#name(), attributes: new Map(), children: [] };
    if (this.#stack.length === 0 && this.#root) fail("a second root element", this.#i);
    for (;;) {
      const before = this.#i;
      this.#skipSpace();
      if (this.#xml[this.#i] === ">" || this.#xml.startsWith("/>", this.#i)) break;
      if (this.#i === before) fail("expected space before an attribute", this.#i);
      this.#attribute(element);
    }
    const parent = this.#stack.at(-1);
    if (parent) parent.children.push(element);
    else this.#root = element;
    if (this.#xml[this.#i] === ">") {
      this.#stack.push(element);
      this.#i += 1;
    } else this.#i += 2;
  }

  /** `key="value"`: the value's line breaks and tabs normalised to spaces, its references decoded. */
  #attribute(element: XmlElement): void {
    const key = this.#name();
    this.#skipSpace();
    if (this.#xml[this.#i] !== "=") fail("expected =", this.#i);
    this.#i += 1;
    this.#skipSpace();
    const quote = this.#xml[this.#i];
    if (quote !== '"' && quote !== "'") fail("expected a quoted value", this.#i);
    const close = this.#xml.indexOf(quote as string, this.#i + 1);
    if (close === -1) fail("unclosed attribute value", this.#i);
    const value = this.#xml.slice(this.#i + 1, close);
    if (value.includes("<")) fail("< in an attribute value", this.#i);
    if (element.attributes.has(key)) fail(`duplicate attribute ${key}`, this.#i);
    const normalised = BREAKS.test(value) ? value.replace(/\r\n?/g, "\n").replace(/[\t\n\r]/g, " ") : value;
    element.attributes.set(key, decode(normalised, this.#i));
    this.#i = close + 1;
  }

  #skipSpace(): void {
    SPACE.lastIndex = this.#i;
    SPACE.exec(this.#xml);
    this.#i = SPACE.lastIndex;
  }

  #name(): string {
    NAME.lastIndex = this.#i;
    const match = NAME.exec(this.#xml);
    if (!match) return fail("expected a name", this.#i);
    this.#i = NAME.lastIndex;
    return match[0];
  }
}
