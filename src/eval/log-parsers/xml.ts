import { LogParserError } from "./django.js";

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
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  let i = 0;
  const skipSpace = () => {
    SPACE.lastIndex = i;
    SPACE.exec(xml);
    i = SPACE.lastIndex;
  };
  const name = () => {
    NAME.lastIndex = i;
    const match = NAME.exec(xml);
    if (!match) return fail("expected a name", i);
    i = NAME.lastIndex;
    return match[0];
  };
  while (i < xml.length) {
    const lt = xml.indexOf("<", i);
    const text = xml.slice(i, lt === -1 ? xml.length : lt);
    if (text !== "") {
      if (stack.length === 0 && text.trim() !== "") fail("text outside the root element", i);
      decode(text, i);
      if (text.includes("]]>")) fail("]]> in text", i);
    }
    if (lt === -1) break;
    i = lt;
    if (xml.startsWith("<!--", i)) {
      const close = xml.indexOf("-->", i + 4);
      if (close === -1 || xml.slice(i + 4, close).includes("--")) fail("bad comment", i);
      i = close + 3;
    } else if (xml.startsWith("<![CDATA[", i)) {
      if (stack.length === 0) fail("CDATA outside the root element", i);
      const close = xml.indexOf("]]>", i);
      if (close === -1) fail("unclosed CDATA", i);
      i = close + 3;
    } else if (xml.startsWith("<?", i)) {
      const close = xml.indexOf("?>", i + 2);
      if (close === -1) fail("unclosed processing instruction", i);
      i = close + 2;
    } else if (xml.startsWith("<!", i)) {
      fail("unsupported declaration", i);
    } else if (xml.startsWith("</", i)) {
      i += 2;
      const tag = name();
      skipSpace();
      if (xml[i] !== ">") fail("bad end tag", i);
      i += 1;
      const open = stack.pop();
      if (!open || open.tag !== tag) fail(`mismatched </${tag}>`, i);
    } else {
      i += 1;
      const element: XmlElement = { tag: name(), attributes: new Map(), children: [] };
      if (stack.length === 0 && root) fail("a second root element", i);
      for (;;) {
        const before = i;
        skipSpace();
        if (xml[i] === ">" || xml.startsWith("/>", i)) break;
        if (i === before) fail("expected space before an attribute", i);
        const key = name();
        skipSpace();
        if (xml[i] !== "=") fail("expected =", i);
        i += 1;
        skipSpace();
        const quote = xml[i];
        if (quote !== '"' && quote !== "'") fail("expected a quoted value", i);
        const close = xml.indexOf(quote as string, i + 1);
        if (close === -1) fail("unclosed attribute value", i);
        const value = xml.slice(i + 1, close);
        if (value.includes("<")) fail("< in an attribute value", i);
        if (element.attributes.has(key)) fail(`duplicate attribute ${key}`, i);
        const normalised = BREAKS.test(value)
          ? value.replace(/\r\n?/g, "\n").replace(/[\t\n\r]/g, " ")
          : value;
        element.attributes.set(key, decode(normalised, i));
        i = close + 1;
      }
      const parent = stack.at(-1);
      if (parent) parent.children.push(element);
      else root = element;
      if (xml[i] === ">") {
        stack.push(element);
        i += 1;
      } else i += 2;
    }
  }
  if (!root) return fail("no element found", 0);
  if (stack.length > 0) fail(`unclosed <${stack.at(-1)?.tag}>`, xml.length);
  return root;
}
